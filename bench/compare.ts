// `npx tsx bench/compare.ts [--a <kind>] [--b <kind>] [--a-entry <file>] [--b-entry <file>]
// [--a-node-flags '<flags>'] [--b-node-flags '<flags>'] [--a-env K=V]... [--b-env K=V]... [--rounds 3]
// [--seconds 5] [--generations 2] [--connections 512]`
//
// Two servers, A and B, loaded at once on core 1 (half the connections each; wrk and the fake upstream on
// core 0), their CPU per request compared round by round (bench/concurrent.ts): what B costs against A,
// however fast the host is that minute. By default A is the bare proxy and B the gateway as `npm start`
// starts it, so A ÷ B is the saturation mode's throughput ratio measured without the host's drift. The
// kinds: `bare` (bench/bare-proxy.ts), `forward` and `fastify-forward` (bench/forward-proxy.ts: the body
// parsed and the answer read whole, on Node's HTTP server or in a Fastify route), `fastify-recorded` (the
// Fastify forward writing a log record per call through the gateway's own log writer and SQLite store),
// `gateway`. Either side can be a gateway from another build (`--b-entry`, e.g. a copy of dist/ with one
// step taken out), with other node flags (`--b-node-flags ''` for V8's defaults) or other settings (`--b-env
// GATEWAY_METRICS=off`). Each generation is a fresh pair of processes, started in alternating order;
// the figure is the geometric mean of the generations' medians. Prints one line per round and a JSON
// summary (with each side's peak RSS, the highest of its generations). Run `npm run build` first.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs as parseNodeArgs } from 'node:util';
import { parseArgs } from './args.js';
import { compileChildren } from './compile-children.js';
import { concurrentRounds, LOAD_CORE, SERVER_CORE, type Loaded, type Round } from './concurrent.js';
import { checkTarget, startGateway } from './gateway.js';
import { geomean, median, round } from './stats.js';
import { guardChildren, peakRssMB, startScript, type Child } from './processes.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(benchDir, '..');

const { values } = parseNodeArgs({
  options: {
    a: { type: 'string', default: 'bare' },
    b: { type: 'string', default: 'gateway' },
    'a-entry': { type: 'string' },
    'b-entry': { type: 'string' },
    'a-node-flags': { type: 'string' },
    'b-node-flags': { type: 'string' },
    'a-env': { type: 'string', multiple: true, default: [] },
    'b-env': { type: 'string', multiple: true, default: [] },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    generations: { type: 'string', default: '2' },
    connections: { type: 'string', default: '512' },
  },
});

const KINDS = ['bare', 'forward', 'fastify-forward', 'fastify-recorded', 'gateway'] as const;
type Kind = (typeof KINDS)[number];

interface Side {
  name: 'A' | 'B';
  kind: Kind;
  entry?: string;
  nodeFlags?: string[];
  env: Record<string, string>;
}

function side(name: 'A' | 'B', key: 'a' | 'b'): Side {
  const kind = values[key] as Kind;
  if (!KINDS.includes(kind)) throw new Error(`--${key} is one of ${KINDS.join(', ')}, got ${kind}`);
  const flags = values[`${key}-node-flags`];
  const env: Record<string, string> = {};
  for (const pair of values[`${key}-env`]) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`--${key}-env takes NAME=value, got ${pair}`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  const entry = values[`${key}-entry`];
  if (kind !== 'gateway' && (entry !== undefined || flags !== undefined || Object.keys(env).length > 0))
    throw new Error(`--${key}-entry, --${key}-node-flags and --${key}-env are for a gateway`);
  return {
    name,
    kind,
    entry: entry === undefined ? undefined : path.resolve(entry),
    nodeFlags: flags === undefined ? undefined : flags.split(/\s+/).filter((f) => f.length > 0),
    env,
  };
}

function wholeNumber(name: 'rounds' | 'seconds' | 'generations' | 'connections'): number {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} takes a whole number ≥ 1`);
  return n;
}

const sides = [side('A', 'a'), side('B', 'b')] as const;
const rounds = wholeNumber('rounds');
const seconds = wholeNumber('seconds');
const generations = wholeNumber('generations');
const connections = wholeNumber('connections');

/** A fresh folder for a `fastify-recorded` server's store, removed with the gateways' at the end. */
function recordsDir(dataDirs: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-recorded-'));
  dataDirs.push(dir);
  return dir;
}

async function start(s: Side, childDir: string, upstreamOrigin: string, dataDirs: string[]): Promise<Loaded> {
  if (s.kind !== 'gateway') {
    const child = await startScript(
      path.join(childDir, s.kind === 'bare' ? 'bare-proxy.js' : 'forward-proxy.js'),
      {
        UPSTREAM: upstreamOrigin,
        ...(s.kind.startsWith('fastify') && { FRAMEWORK: 'fastify' }),
        ...(s.kind === 'fastify-recorded' && {
          RECORDS_DIR: recordsDir(dataDirs),
          GATEWAY_DIST: path.join(repoRoot, 'dist'),
        }),
      },
      { pin: SERVER_CORE },
    );
    const target = {
      name: 'bare' as const,
      origin: `http://127.0.0.1:${child.port}`,
      path: '/v1/chat/completions',
      headers: { authorization: 'Bearer sk-bench' },
    };
    const problem = await checkTarget(target);
    if (problem) {
      await child.stop();
      throw new Error(`${s.kind} (${s.name}) does not answer: ${problem}`);
    }
    return { name: s.name, target, child };
  }
  const args = parseArgs(s.entry === undefined ? [] : ['--gateway-entry', s.entry], repoRoot);
  // startGateway gives the gateway this process's environment: the side's settings are set around it.
  const saved = Object.fromEntries(Object.keys(s.env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, s.env);
  try {
    const started = await startGateway(args, repoRoot, `${upstreamOrigin}/v1`, SERVER_CORE, [], s.nodeFlags);
    if ('reason' in started) throw new Error(`gateway (${s.name}) did not start: ${started.reason}`);
    dataDirs.push(started.dataDir);
    return { name: s.name, target: started.target, child: started.child };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

async function main(): Promise<void> {
  execFileSync('taskset', ['-a', '-p', '-c', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
  const children: Child[] = [];
  // Bounded: each generation's starts, warm-up, and rounds with their waits for idle (5 s at most each).
  const hardLimitMs = 60_000 + generations * (40_000 + rounds * (seconds + 12) * 1000);
  const release = guardChildren(children, hardLimitMs);
  const dataDirs: string[] = [];
  try {
    const childDir = compileChildren(benchDir, repoRoot);
    const upstream = await startScript(path.join(childDir, 'fake-upstream.js'), {}, { pin: LOAD_CORE });
    children.push(upstream);
    const upstreamOrigin = `http://127.0.0.1:${upstream.port}`;
    const results = new Map<string, Round[]>(sides.map((s) => [s.name, []]));
    const peakRss = new Map<string, number>();
    const generationRatios: number[] = [];
    for (let generation = 1; generation <= generations; generation++) {
      const loaded = new Map<string, Loaded>();
      // Started in alternating order: a control of two identical servers measured one place a point or
      // two cheaper than the other.
      for (const s of generation % 2 === 1 ? sides : [...sides].reverse()) {
        const l = await start(s, childDir, upstreamOrigin, dataDirs);
        children.push(l.child);
        loaded.set(s.name, l);
      }
      const [a, b] = [loaded.get('A')!, loaded.get('B')!];
      generationRatios.push(
        await concurrentRounds([a, b], results, {
          rounds,
          seconds,
          connections: Math.floor(connections / 2),
          loadCore: LOAD_CORE,
          generation,
        }),
      );
      for (const l of [a, b]) {
        peakRss.set(l.name, Math.max(peakRss.get(l.name) ?? 0, peakRssMB(l.child.pid) ?? 0));
        await l.child.stop();
        children.splice(children.indexOf(l.child), 1);
      }
    }
    const summary = (s: Side) => {
      const r = results.get(s.name)!;
      return {
        kind: s.kind,
        ...(s.kind === 'gateway' && {
          entry: path.relative(repoRoot, s.entry ?? path.join(repoRoot, 'dist', 'main.js')),
          node_flags: s.nodeFlags?.join(' ') ?? '(as npm start)',
          env: s.env,
        }),
        rps: Math.round(median(r.map((x) => x.rps))),
        cpu_per_request_us: Math.round(median(r.map((x) => x.cpuPerRequestUs))),
        peak_rss_mb: peakRss.get(s.name),
      };
    };
    const ratio = geomean(generationRatios);
    console.log(
      JSON.stringify(
        {
          generations,
          rounds,
          seconds_per_round: seconds,
          connections_each: Math.floor(connections / 2),
          A: summary(sides[0]),
          B: summary(sides[1]),
          generation_cpu_ratios_b_over_a: generationRatios.map((r) => round(r)),
          // The generations by which side was started first (odd: A, even: B). The two have differed by up
          // to 17 % in one run (the one started first cheaper); the geometric mean of an even number of
          // generations weighs both alike.
          by_start_order: {
            a_started_first: round(geomean(generationRatios.filter((_, i) => i % 2 === 0))),
            ...(generationRatios.length > 1 && {
              b_started_first: round(geomean(generationRatios.filter((_, i) => i % 2 === 1))),
            }),
          },
          // The figure: B's CPU per request against A's. Both CPU-bound on one core, A ÷ B is also B's
          // throughput as a share of A's (0.6 is the saturation target when A is the bare proxy).
          cpu_b_over_a_geomean: round(ratio),
          throughput_b_over_a: round(1 / ratio),
        },
        null,
        2,
      ),
    );
  } finally {
    for (const child of children.reverse()) await child.stop();
    release();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
