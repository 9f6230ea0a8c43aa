// `npx tsx bench/observability.ts [--rounds 4] [--seconds 8] [--generations 1] [--connections 512] [--no-traces]
// [--concurrent] [--cpu-prof <dir>]`: what metrics and traces cost at saturation (or, `--connections 64`,
// below it). `--concurrent`: both gateways loaded at once, half the connections each, sharing core 1, so
// that whatever slows the host slows both alike; their CPU per request is then compared round by round.
// Two gateways from the same build, started as `npm start` starts them and pinned to core 1 (wrk, the fake
// upstream, the OTLP receiver and this process on core 0, as in `npm run bench -- --mode saturation`): one
// with `GATEWAY_METRICS=off` and no traces, one with metrics on and every call traced to a local OTLP
// receiver that accepts each export (`--no-traces`: metrics only). Only one is loaded at a time, in
// interleaved rounds that they take turns to start, each round followed by a wait for its gateway to be
// idle again; `--generations N` repeats that with N fresh pairs of gateways. Reports the median requests/s
// and server CPU per request of each, and their ratios. `--cpu-prof <dir>`: each gateway also writes a V8
// CPU profile under <dir>/off and <dir>/on when it stops. The gateways' environment is this process's:
// `OTEL_TRACES_SAMPLER=traceidratio OTEL_TRACES_SAMPLER_ARG=0.1` measures sampled traces. Run
// `npm run build` first.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs as parseNodeArgs } from 'node:util';
import { parseArgs } from './args.js';
import { compileChildren } from './compile-children.js';
import { startGateway } from './gateway.js';
import { cpuTimeMs, guardChildren, startScript, waitUntilIdle, type Child } from './processes.js';
import type { Target } from './target.js';
import { runWrk } from './wrk.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(benchDir, '..');
const SERVER_CORE = '1';
const LOAD_CORE = '0';
const UPSTREAM_LATENCY_MS = 20;

const { values } = parseNodeArgs({
  options: {
    rounds: { type: 'string', default: '4' },
    // `--generations N`: N pairs of fresh gateways, `--rounds` each (see main).
    generations: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '8' },
    // `--connections 64`: below saturation (64 × 20 ms caps the load near 3,200 requests/s), where CPU per
    // request is the cost, without the feedback of a saturated event loop (docs/benchmarks.md).
    connections: { type: 'string', default: '512' },
    // `--no-traces`: the "on" gateway has metrics only, to tell the two costs apart.
    traces: { type: 'boolean', default: true },
    'no-traces': { type: 'boolean', default: false },
    // `--concurrent`: load both gateways at once (see main).
    concurrent: { type: 'boolean', default: false },
    // `--cpu-prof <dir>`: each gateway writes a V8 CPU profile there when it stops (node --cpu-prof).
    'cpu-prof': { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const generations = Number(values.generations);
const seconds = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const traced = !values['no-traces'];
const concurrent = values.concurrent;
const profileDir = values['cpu-prof'] === undefined ? undefined : path.resolve(values['cpu-prof']);

interface Round {
  rps: number;
  cpuPerRequestUs: number;
}

interface Loaded {
  name: string;
  target: Target;
  child: Child;
}

/**
 * Loads the gateways for `durationS`, all at once (their wrk runs started in the order given), each with
 * `connections`; then waits until each is idle, so the CPU of the work a round left counts to it.
 */
async function measure(gateways: Loaded[], durationS: number, connections: number): Promise<Round[]> {
  const cpu0 = gateways.map((g) => cpuTimeMs(g.child.pid) ?? NaN);
  const runs = await Promise.all(
    gateways.map((g) =>
      runWrk(g.target, { connections, durationS, upstreamLatencyMs: UPSTREAM_LATENCY_MS, pin: LOAD_CORE }),
    ),
  );
  for (const g of gateways) await waitUntilIdle(g.child);
  return gateways.map((g, i) => {
    const r = runs[i];
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${g.name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    const cpuMs = (cpuTimeMs(g.child.pid) ?? NaN) - cpu0[i];
    return { rps: r.rps, cpuPerRequestUs: (cpuMs * 1000) / r.total };
  });
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** `rounds` rounds of both gateways loaded at once; the median of their "on" ÷ "off" CPU per request. */
async function concurrentRounds(
  generation: number,
  started: Loaded[],
  results: Map<string, Round[]>,
): Promise<number> {
  // Warm-up: longer than alone, as each gateway gets half the core (a first round after 3 s still ran
  // 10–20 % dearer than the next).
  await measure(started, 6, CONNECTIONS / 2);
  const ratios: number[] = [];
  for (let i = 1; i <= rounds; i++) {
    // Whose load starts first alternates too.
    const order = i % 2 === 1 ? started : [...started].reverse();
    const measured = await measure(order, seconds, CONNECTIONS / 2);
    const byName = new Map(order.map((g, k) => [g.name, measured[k]]));
    for (const [name, r] of byName) results.get(name)!.push(r);
    const [off, on] = [byName.get('off')!, byName.get('on')!];
    ratios.push(on.cpuPerRequestUs / off.cpuPerRequestUs);
    console.log(
      `generation ${generation} round ${i}: off ${off.rps.toFixed(0).padStart(6)} req/s ${off.cpuPerRequestUs.toFixed(0).padStart(4)} µs, on ${on.rps.toFixed(0).padStart(6)} req/s ${on.cpuPerRequestUs.toFixed(0).padStart(4)} µs CPU/request; on / off ${ratios.at(-1)!.toFixed(3)}`,
    );
  }
  console.log(`generation ${generation}: CPU per request on / off ${median(ratios).toFixed(3)}`);
  return median(ratios);
}

/** `rounds` rounds of each gateway loaded alone, in turns; returns the rounds counted so far. */
async function roundsInTurn(
  generation: number,
  started: Loaded[],
  results: Map<string, Round[]>,
  round: number,
): Promise<number> {
  for (const g of started) await measure([g], 3, CONNECTIONS); // warm-up
  for (let i = 1; i <= rounds; i++) {
    round += 1;
    // Off first in odd rounds, on first in even ones: whichever went second in a pair measured several
    // percent cheaper in a control run with two identical gateways, so each takes both places equally.
    const order = round % 2 === 1 ? started : [...started].reverse();
    for (const g of order) {
      const [r] = await measure([g], seconds, CONNECTIONS);
      results.get(g.name)!.push(r);
      console.log(
        `generation ${generation} round ${i} ${g.name.padEnd(3)} ${r.rps.toFixed(0).padStart(6)} req/s ${r.cpuPerRequestUs.toFixed(0).padStart(5)} µs CPU/request`,
      );
    }
  }
  return round;
}

async function main(): Promise<void> {
  execFileSync('taskset', ['-a', '-p', '-c', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
  const children: Child[] = [];
  // Bounded: a generation's starts and warm-ups, then its rounds with their waits for idle (5 s at most).
  const hardLimitMs = 60_000 + generations * (30_000 + 2 * rounds * (seconds + 6) * 1000);
  const release = guardChildren(children, hardLimitMs);
  const dataDirs: string[] = [];
  let exports = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      exports += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverPort = (receiver.address() as { port: number }).port;
  try {
    const childDir = compileChildren(benchDir, repoRoot);
    const upstream = await startScript(path.join(childDir, 'fake-upstream.js'), {}, { pin: LOAD_CORE });
    children.push(upstream);
    const upstreamUrl = `http://127.0.0.1:${upstream.port}/v1`;
    const args = parseArgs([], repoRoot);

    const variants = [
      { name: 'off', env: { GATEWAY_METRICS: 'off', OTEL_EXPORTER_OTLP_ENDPOINT: '' } },
      {
        name: 'on',
        env: {
          GATEWAY_METRICS: 'on',
          OTEL_EXPORTER_OTLP_ENDPOINT: traced ? `http://127.0.0.1:${receiverPort}` : '',
        },
      },
    ];
    const results = new Map<string, Round[]>(variants.map((v) => [v.name, []]));
    // --concurrent: each generation's median of its rounds' "on" ÷ "off" CPU per request.
    const generationRatios: number[] = [];
    // Fresh gateways for each generation: one process can stay several percent cheaper or dearer than
    // another of the same build and settings for its whole life (compiled code, heap layout), so a
    // comparison of one pair of processes says as much about them as about the settings.
    let round = 0;
    for (let generation = 1; generation <= generations; generation++) {
      const started: Loaded[] = [];
      // Started in turns too: in a concurrent control with two identical gateways, one place measured a
      // point or two cheaper than the other.
      for (const variant of generation % 2 === 1 ? variants : [...variants].reverse()) {
        // The gateway's environment is this process's, plus what startGateway sets.
        Object.assign(process.env, variant.env);
        const profileFlags =
          profileDir === undefined
            ? []
            : ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, variant.name)}`];
        const gateway = await startGateway(args, repoRoot, upstreamUrl, SERVER_CORE, profileFlags);
        if ('reason' in gateway)
          throw new Error(`gateway (${variant.name}) did not start: ${gateway.reason}`);
        children.push(gateway.child);
        dataDirs.push(gateway.dataDir);
        started.push({ name: variant.name, target: gateway.target, child: gateway.child });
      }

      if (concurrent) generationRatios.push(await concurrentRounds(generation, started, results));
      else round = await roundsInTurn(generation, started, results, round);
      for (const g of started) {
        await g.child.stop();
        children.splice(children.indexOf(g.child), 1);
      }
    }
    const off = results.get('off')!;
    const on = results.get('on')!;
    const rpsOff = median(off.map((r) => r.rps));
    const rpsOn = median(on.map((r) => r.rps));
    const cpuOff = median(off.map((r) => r.cpuPerRequestUs));
    const cpuOn = median(on.map((r) => r.cpuPerRequestUs));
    console.log(
      JSON.stringify(
        {
          generations,
          rounds,
          seconds_per_round: seconds,
          connections: CONNECTIONS,
          off: { rps: Math.round(rpsOff), cpu_per_request_us: Math.round(cpuOff) },
          on: { rps: Math.round(rpsOn), cpu_per_request_us: Math.round(cpuOn), otlp_exports: exports },
          concurrent,
          throughput_on_over_off: round3(rpsOn / rpsOff),
          cpu_on_over_off: round3(cpuOn / cpuOff),
          // Each round's "on" against the "off" just before it: the pairs' median is steadier than the
          // ratio of the medians when the host's speed drifts between rounds.
          median_pair_throughput_ratio:
            Math.round(median(on.map((r, i) => r.rps / off[i].rps)) * 1000) / 1000,
          median_pair_cpu_ratio:
            Math.round(median(on.map((r, i) => r.cpuPerRequestUs / off[i].cpuPerRequestUs)) * 1000) / 1000,
          per_round_throughput_ratio: on.map((r, i) => Math.round((r.rps / off[i].rps) * 100) / 100),
          ...(concurrent && {
            // The figure of this mode: the generations' medians of on ÷ off CPU per request, pooled.
            generation_cpu_ratios: generationRatios.map(round3),
            cpu_on_over_off_geomean: round3(
              Math.exp(generationRatios.reduce((sum, r) => sum + Math.log(r), 0) / generationRatios.length),
            ),
            cpu_on_over_off_median_of_generations: round3(median(generationRatios)),
          }),
        },
        null,
        2,
      ),
    );
    if (traced && exports === 0)
      throw new Error('no trace export reached the receiver: the "on" gateway traced nothing');
  } finally {
    for (const child of children.reverse()) await child.stop();
    receiver.close();
    release();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
