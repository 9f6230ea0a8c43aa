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
import {
  concurrentRounds,
  LOAD_CORE,
  measure as measureAtOnce,
  SERVER_CORE,
  type Loaded,
  type Round,
} from './concurrent.js';
import { geomean, median, round as round3 } from './stats.js';
import { guardChildren, startScript, type Child } from './processes.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(benchDir, '..');

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

/** `rounds` rounds of each gateway loaded alone, in turns; returns the rounds counted so far. */
async function roundsInTurn(
  generation: number,
  started: Loaded[],
  results: Map<string, Round[]>,
  round: number,
): Promise<number> {
  for (const g of started) await measureAtOnce([g], 3, CONNECTIONS, LOAD_CORE); // warm-up
  for (let i = 1; i <= rounds; i++) {
    round += 1;
    // Off first in odd rounds, on first in even ones: whichever went second in a pair measured several
    // percent cheaper in a control run with two identical gateways, so each takes both places equally.
    const order = round % 2 === 1 ? started : [...started].reverse();
    for (const g of order) {
      const [r] = await measureAtOnce([g], seconds, CONNECTIONS, LOAD_CORE);
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

      if (concurrent) {
        const [off, on] = ['off', 'on'].map((name) => started.find((g) => g.name === name)!);
        generationRatios.push(
          await concurrentRounds([off, on], results, {
            rounds,
            seconds,
            connections: CONNECTIONS / 2,
            loadCore: LOAD_CORE,
            generation,
          }),
        );
      } else round = await roundsInTurn(generation, started, results, round);
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
          median_pair_throughput_ratio: round3(median(on.map((r, i) => r.rps / off[i].rps))),
          median_pair_cpu_ratio: round3(median(on.map((r, i) => r.cpuPerRequestUs / off[i].cpuPerRequestUs))),
          per_round_throughput_ratio: on.map((r, i) => Math.round((r.rps / off[i].rps) * 100) / 100),
          ...(concurrent && {
            // The figure of this mode: the generations' medians of on ÷ off CPU per request, pooled.
            generation_cpu_ratios: generationRatios.map((r) => round3(r)),
            cpu_on_over_off_geomean: round3(geomean(generationRatios)),
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
