// `npm run bench -- --mode saturation`: what the gateway costs when the CPU, not the upstream, is the
// limit. The bare proxy and the gateway each run alone on core 1 (`taskset -c 1`); wrk, the fake upstream
// and this process share core 0. 512 connections against a 20 ms upstream ask for up to 25,600
// requests/s, far more than one core of Node serves, so each proxy answers as fast as its core allows:
// the throughput ratio is then the ratio of their costs. Rounds are interleaved, the two taking turns to go
// first, each waiting for its server to be idle again, and the median of each is kept, so a disturbance
// on the machine hits both alike.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import type { Args } from './args.js';
import { compileChildren } from './compile-children.js';
import { checkTarget, startGateway } from './gateway.js';
import { measureSequential, printSequential } from './measure-latency.js';
import {
  coreTimesMs,
  cpuTimeMs,
  guardChildren,
  peakRssMB,
  startScript,
  waitUntilIdle,
  type Child,
} from './processes.js';
import { machineInfo } from './report.js';
import {
  judgeSaturation,
  medians,
  saturationTable,
  type SaturationReport,
  type SaturationRound,
} from './saturation-report.js';
import { round } from './stats.js';
import type { Target } from './target.js';
import { runWrk, wrkVersion } from './wrk.js';

const CONNECTIONS = 512;
const UPSTREAM_LATENCY_MS = 20;
const ROUNDS = 3;
const SERVER_CORE = '1';
const LOAD_CORE = '0';
/** The whole run's bound: 360 s, and 90 s more for each further generation. */
const hardLimitMs = (generations: number) => 360_000 + (generations - 1) * 90_000;

const settings = (quick: boolean) =>
  quick
    ? { latency: 500, latencyWarmup: 200, ttfb: 50, ttfbWarmup: 10, warmupS: 1, roundS: 2, phaseMaxMs: 8_000 }
    : {
        latency: 10_000,
        latencyWarmup: 2_000,
        ttfb: 1_000,
        ttfbWarmup: 200,
        warmupS: 5,
        roundS: 10,
        phaseMaxMs: 40_000,
      };

/** Why this machine cannot run the mode, or undefined. */
function preflight(): string | undefined {
  if (cpus().length < 2)
    return `it needs 2 cores (one for the server under test, one for the load) and this machine has ${cpus().length}`;
  if (spawnSync('taskset', ['--version'], { timeout: 5_000 }).error)
    return 'taskset not found (it is in util-linux: apt-get install -y util-linux)';
  if (!wrkVersion())
    return 'wrk not found. It drives the load (autocannon, one JavaScript thread, would run out of CPU before the proxies do). Install it: apt-get install -y wrk (Debian, Ubuntu)';
  return undefined;
}

/** One wrk round against `target`, with its server's CPU and both cores' use over the round. */
async function measureRound(
  target: Target,
  server: Child,
  roundNo: number,
  durationS: number,
): Promise<SaturationRound> {
  const pid = server.pid;
  const cpu0 = cpuTimeMs(pid);
  const [c0, c1] = [coreTimesMs(0), coreTimesMs(1)];
  const started = performance.now();
  const r = await runWrk(target, {
    connections: CONNECTIONS,
    durationS,
    upstreamLatencyMs: UPSTREAM_LATENCY_MS,
    pin: LOAD_CORE,
  }).catch((err: Error) => {
    throw new Error(`${target.name}, round ${roundNo}: ${err.message}${serverState(server)}`);
  });
  const wallMs = performance.now() - started;
  const [d0, d1] = [coreTimesMs(0), coreTimesMs(1)];
  // What the load left the server to do is this round's cost too (processes.ts, waitUntilIdle).
  await waitUntilIdle(server);
  const cpuMs = (cpuTimeMs(pid) ?? NaN) - (cpu0 ?? NaN);
  const pct = (ms: number) => round((ms * 100) / wallMs, 1);
  return {
    round: roundNo,
    target: target.name as 'bare' | 'gateway',
    rps: round(r.rps, 1),
    total: r.total,
    latencyP50Ms: r.latencyP50,
    latencyP99Ms: r.latencyP99,
    non2xx: r.non2xx,
    errors: r.errors,
    serverCpuPct: pct(cpuMs),
    cpuPerRequestUs: round((cpuMs * 1000) / r.total, 1),
    core0BusyPct: pct((d0?.busy ?? NaN) - (c0?.busy ?? NaN)),
    core1BusyPct: pct((d1?.busy ?? NaN) - (c1?.busy ?? NaN)),
    core1SoftirqPct: pct((d1?.softirq ?? NaN) - (c1?.softirq ?? NaN)),
  };
}

/** Whether a server that stopped answering is still running, and the tail of its stderr. */
function serverState({ process: p, stderrTail }: Child): string {
  let state = 'it is still running';
  if (p.signalCode !== null)
    state = `it was killed by ${p.signalCode}, not by the bench: something else on the machine signalled it`;
  else if (p.exitCode !== null) state = `it exited with code ${p.exitCode}`;
  const tail = stderrTail().trim();
  return `\n  ${state}${tail ? `; its stderr ends with: ${tail.slice(-1500)}` : ''}`;
}

function printRound(r: SaturationRound): void {
  const failures = r.non2xx || r.errors ? `, non-2xx ${r.non2xx}, socket errors ${r.errors}` : '';
  console.log(
    `  round ${r.round} ${r.target.padEnd(8)} ${Math.round(r.rps).toLocaleString('en-US').padStart(7)} req/s, ` +
      `p50 ${r.latencyP50Ms.toFixed(1)} ms, p99 ${r.latencyP99Ms.toFixed(1)} ms; ` +
      `server ${r.serverCpuPct.toFixed(0)} % of core 1, ${r.cpuPerRequestUs.toFixed(0)} µs/request ` +
      `(core 1 busy ${r.core1BusyPct.toFixed(0)} %, core 0 busy ${r.core0BusyPct.toFixed(0)} %)${failures}`,
  );
}

const BARE_HEADERS = { authorization: 'Bearer sk-bench' };

/** A bare proxy and (unless --no-gateway) a gateway on the server core: one generation's servers. */
interface ServerPair {
  targets: Target[];
  servers: Map<Target['name'], Child>;
  stop(): Promise<void>;
}

/** Starts a pair, checks that each answers, and notes in the report when the gateway could not start. */
async function startPair(
  args: Args,
  childDir: string,
  repoRoot: string,
  upstreamOrigin: string,
  children: Child[],
  dataDirs: string[],
  report: SaturationReport,
): Promise<ServerPair> {
  const bare = await startScript(
    path.join(childDir, 'bare-proxy.js'),
    { UPSTREAM: upstreamOrigin },
    { pin: SERVER_CORE },
  );
  children.push(bare);
  const bareTarget: Target = {
    name: 'bare',
    origin: `http://127.0.0.1:${bare.port}`,
    path: '/v1/chat/completions',
    headers: BARE_HEADERS,
  };
  const problem = await checkTarget(bareTarget);
  if (problem) throw new Error(`bare target does not answer: ${problem}`);
  const targets = [bareTarget];
  const servers = new Map<Target['name'], Child>([['bare', bare]]);
  if (args.gateway && report.gateway.status !== 'failed') {
    const started = await startGateway(args, repoRoot, `${upstreamOrigin}/v1`, SERVER_CORE);
    if ('reason' in started) {
      report.gateway = { status: 'failed', reason: started.reason };
      console.log(`gateway not measured: ${started.reason}`);
    } else {
      children.push(started.child);
      dataDirs.push(started.dataDir);
      targets.push(started.target);
      servers.set('gateway', started.child);
      report.gateway = { status: 'measured' };
    }
  }
  return {
    targets,
    servers,
    async stop() {
      for (const child of servers.values()) {
        await child.stop();
        children.splice(children.indexOf(child), 1);
      }
    },
  };
}

/** Keeps the highest peak RSS of each kind of server over the generations. */
function recordPeakRss(report: SaturationReport, pair: ServerPair): void {
  for (const name of ['bare', 'gateway'] as const) {
    const child = pair.servers.get(name);
    const peak = child && peakRssMB(child.pid);
    if (peak !== undefined) report.peakRssMB[name] = Math.max(report.peakRssMB[name] ?? 0, peak);
  }
}

export async function runSaturation(args: Args, benchDir: string, repoRoot: string): Promise<void> {
  const problem = preflight();
  if (problem) {
    console.error(`saturation mode cannot run: ${problem}`);
    process.exitCode = 1;
    return;
  }
  const s = settings(args.quick);
  // This process (the concurrency-1 client) belongs to the load side, with every thread it has.
  execFileSync('taskset', ['-a', '-p', '-c', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
  const children: Child[] = [];
  const dataDirs: string[] = [];
  const release = guardChildren(children, hardLimitMs(args.generations));

  const report: SaturationReport = {
    date: new Date().toISOString(),
    mode: args.quick ? 'saturation-quick' : 'saturation',
    machine: machineInfo(),
    loadAverageBefore: round(loadavg()[0], 2),
    settings: {
      connections: CONNECTIONS,
      upstreamLatencyMs: UPSTREAM_LATENCY_MS,
      rounds: ROUNDS,
      generations: args.generations,
      roundDurationS: s.roundS,
      warmupS: s.warmupS,
      loadGenerator: `${wrkVersion()}, 1 thread`,
      serverCore: SERVER_CORE,
      loadCore: LOAD_CORE,
      latencyRequests: s.latency,
      ttfbRequests: s.ttfb,
      gatewayHeaders: args.config !== undefined ? 'config' : 'provider',
      ...(args.config !== undefined ? { gatewayConfig: args.config } : {}),
      ...(args.redis !== undefined ? { redis: true } : {}),
      ...(args.rateLimitPolicies ? { rateLimitPolicies: args.rateLimitPolicies } : {}),
    },
    rounds: [],
    median: {},
    bareSaturation: { verdict: 'unknown', detail: 'not measured' },
    latencyMs: {},
    ttfbMs: {},
    peakRssMB: {},
    gateway: { status: 'skipped' },
  };

  try {
    const childDir = compileChildren(benchDir, repoRoot);
    const upstream = await startScript(path.join(childDir, 'fake-upstream.js'), {}, { pin: LOAD_CORE });
    children.push(upstream);
    const upstreamOrigin = `http://127.0.0.1:${upstream.port}`;
    const path_ = '/v1/chat/completions';
    const direct: Target = { name: 'direct', origin: upstreamOrigin, path: path_, headers: BARE_HEADERS };
    const problem = await checkTarget(direct);
    if (problem) throw new Error(`direct target does not answer: ${problem}`);
    console.log(
      `pinned: bare proxy and gateway on core ${SERVER_CORE}; wrk, fake upstream and this process on core ${LOAD_CORE}`,
    );
    let pair = await startPair(args, childDir, repoRoot, upstreamOrigin, children, dataDirs, report);
    const targets: Target[] = [direct, ...pair.targets];
    console.log(
      `\nlatency at concurrency 1, 0 ms upstream (${s.latency} requests after ${s.latencyWarmup} warm-up)`,
    );
    for (const t of targets) {
      const r = await measureSequential(t, {
        requests: s.latency,
        warmup: s.latencyWarmup,
        maxMs: s.phaseMaxMs,
      });
      printSequential(t.name, r, 'total');
      report.latencyMs[t.name] = r.total;
      if (t.name === 'gateway' && r.failures) report.gateway = { status: 'failed', reason: r.firstFailure };
    }
    console.log(`\nstreaming time to first byte (${s.ttfb} requests after ${s.ttfbWarmup} warm-up)`);
    for (const t of targets) {
      const r = await measureSequential(t, {
        requests: s.ttfb,
        warmup: s.ttfbWarmup,
        maxMs: s.phaseMaxMs,
        stream: true,
      });
      printSequential(t.name, r, 'firstByte');
      report.ttfbMs[t.name] = r.firstByte;
    }

    console.log(
      `\nsaturation: ${CONNECTIONS} connections, ${UPSTREAM_LATENCY_MS} ms upstream, ${report.settings.loadGenerator}; ` +
        `${s.warmupS} s warm-up each, then ${ROUNDS} interleaved rounds of ${s.roundS} s` +
        (args.generations > 1 ? `, for each of ${args.generations} fresh pairs of servers` : ''),
    );
    // A server process can stay several percent cheaper or dearer than another of the same build for its
    // whole life (docs/benchmarks.md, "One pair of processes is not enough"): each generation measures a
    // fresh pair, and their rounds are pooled. The concurrency-1 phases above ran on the first pair.
    for (let generation = 1; generation <= args.generations; generation++) {
      if (generation > 1) {
        recordPeakRss(report, pair);
        await pair.stop();
        pair = await startPair(args, childDir, repoRoot, upstreamOrigin, children, dataDirs, report);
        console.log(`generation ${generation}: fresh bare proxy and gateway`);
      }
      const loaded = pair.targets.filter(
        (t) => t.name === 'bare' || (t.name === 'gateway' && report.gateway.status === 'measured'),
      );
      for (const t of loaded)
        await runWrk(t, {
          connections: CONNECTIONS,
          durationS: s.warmupS,
          upstreamLatencyMs: UPSTREAM_LATENCY_MS,
          pin: LOAD_CORE,
        });
      // The two take turns going first: the one measured second in a pair came out several percent cheaper
      // with two identical servers (docs/benchmarks.md, "OTLP protobuf").
      for (let i = 1; i <= ROUNDS; i++) {
        const n = (generation - 1) * ROUNDS + i;
        for (const t of n % 2 === 1 ? loaded : [...loaded].reverse()) {
          const r = await measureRound(t, pair.servers.get(t.name)!, n, s.roundS);
          printRound(r);
          report.rounds.push(r);
        }
      }
    }
    recordPeakRss(report, pair);
    report.peakRssMB.upstream = peakRssMB(upstream.pid);

    const of = (name: 'bare' | 'gateway') => report.rounds.filter((r) => r.target === name);
    report.median = { bare: medians(of('bare')), gateway: medians(of('gateway')) };
    const { bare: b, gateway: g } = report.median;
    if (b && g) report.gatewayToBare = round(g.rps / b.rps, 3);
    report.bareSaturation = judgeSaturation(b);
    const { latencyMs: l, ttfbMs: f } = report;
    if (l.bare?.n && l.gateway?.n)
      report.beyondBareMs = {
        p50: round(l.gateway.p50 - l.bare.p50),
        p99: round(l.gateway.p99 - l.bare.p99),
      };
    if (f.bare?.n && f.gateway?.n)
      report.beyondBareTtfbMs = {
        p50: round(f.gateway.p50 - f.bare.p50),
        p99: round(f.gateway.p99 - f.bare.p99),
      };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
    release();
  }

  const table = saturationTable(report);
  console.log(`\n${table}\n`);
  if (report.loadAverageBefore >= 0.5)
    console.log(
      `WARNING: the machine was busy before the run (load average ${report.loadAverageBefore.toFixed(2)}): other work (or a bench run just before) shared the cores, so the figures are disturbed`,
    );
  if (report.gatewayToBare !== undefined) {
    const bareRps = (n: number) => report.rounds.find((r) => r.target === 'bare' && r.round === n)?.rps;
    const perRound = report.rounds
      .filter((r) => r.target === 'gateway')
      .map((g) => (g.rps / (bareRps(g.round) ?? NaN)).toFixed(2));
    console.log(
      `throughput ratio gateway / bare proxy: ${report.gatewayToBare.toFixed(2)}× (of the medians; round by round ${perRound.join(', ')})`,
    );
  }
  const verdict = {
    'cpu-bound': 'the bare proxy was CPU-bound',
    'core-shared': 'WARNING: the bare proxy did not have its core to itself',
    'not-cpu-bound': 'WARNING: the bare proxy was NOT CPU-bound, so the ratio understates the gateway’s cost',
    unknown: 'WARNING: could not tell whether the bare proxy was CPU-bound',
  }[report.bareSaturation.verdict];
  console.log(`${verdict}: ${report.bareSaturation.detail}`);
  if (report.gateway.status !== 'measured')
    console.log(
      `gateway: ${report.gateway.status}${report.gateway.reason ? ` — ${report.gateway.reason}` : ''}`,
    );
  const failed = report.rounds.filter((r) => r.non2xx || r.errors);
  if (failed.length) console.log(`WARNING: ${failed.length} round(s) had non-2xx answers or socket errors`);

  const resultsDir = path.join(benchDir, 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(
    resultsDir,
    args.config !== undefined ? 'saturation-routing.json' : 'saturation.json',
  );
  writeFileSync(file, `${JSON.stringify({ ...report, table }, null, 2)}\n`);
  console.log(`written ${path.relative(repoRoot, file)}`);
}
