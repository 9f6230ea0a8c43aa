// `npm run bench`: what the gateway costs on top of a call, measured against a direct call to a fake
// upstream and against a bare Node proxy (the floor for any Node gateway). Every server runs in its
// own process; this process only generates load. Flags: --mode saturation (bench/saturation.ts: each
// proxy pinned to a core of its own and loaded until that core is full; the default, --mode latency, is
// the run below), --quick (smoke run), --config '<json>' (send x-gateway-config instead of provider
// headers; `{{UPSTREAM}}` in it becomes the fake's /v1 URL), --build (run the production build first),
// --no-gateway, --gateway-entry <file> (another build's main.js), --redis <url> (the gateway's REDIS_URL,
// under a key prefix of its own), --rate-limit-policy '<json>' (a policy created before measuring).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from './args.js';
import { compileChildren } from './compile-children.js';
import { checkTarget, startGateway } from './gateway.js';
import { measureSequential, printSequential as note } from './measure-latency.js';
import { measureThroughput } from './measure-throughput.js';
import { cpuTimeMs, guardChildren, peakRssMB, startScript, type Child } from './processes.js';
import { added, machineInfo, markdownTable, type BenchReport } from './report.js';
import { runSaturation } from './saturation.js';
import type { Target } from './target.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(benchDir, '..');
const HARD_LIMIT_MS = 240_000;

const settings = (quick: boolean) =>
  quick
    ? { latency: 500, latencyWarmup: 200, ttfb: 50, ttfbWarmup: 10, durationS: 2, phaseMaxMs: 8_000 }
    : {
        latency: 10_000,
        // Enough for every process's hot code to be optimised: a shorter warm-up measures the JIT, and the
        // first thousand or so requests of each target then decide the p99.
        latencyWarmup: 2_000,
        ttfb: 1_000,
        ttfbWarmup: 200,
        durationS: 10,
        phaseMaxMs: 40_000,
      };

const THROUGHPUT_CONNECTIONS = 64;
const THROUGHPUT_UPSTREAM_LATENCY_MS = 20;

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), repoRoot);
  if (args.mode === 'saturation') return runSaturation(args, benchDir, repoRoot);
  const s = settings(args.quick);
  const children: Child[] = [];
  let gatewayDataDir: string | undefined;
  const release = guardChildren(children, HARD_LIMIT_MS);

  const report: BenchReport = {
    date: new Date().toISOString(),
    mode: args.quick ? 'quick' : 'full',
    machine: machineInfo(),
    settings: {
      latencyRequests: s.latency,
      ttfbRequests: s.ttfb,
      throughputConnections: THROUGHPUT_CONNECTIONS,
      throughputDurationS: s.durationS,
      throughputUpstreamLatencyMs: THROUGHPUT_UPSTREAM_LATENCY_MS,
      gatewayHeaders: args.config !== undefined ? 'config' : 'provider',
      ...(args.config !== undefined ? { gatewayConfig: args.config } : {}),
      ...(args.redis !== undefined ? { redis: true } : {}),
      ...(args.rateLimitPolicies ? { rateLimitPolicies: args.rateLimitPolicies } : {}),
    },
    latencyMs: {},
    addedLatencyMs: {},
    throughput: {},
    ttfbMs: {},
    addedTtfbMs: {},
    cpuPerRequestUs: {},
    peakRssMB: {},
    gateway: { status: 'skipped' },
  };

  try {
    const childDir = compileChildren(benchDir, repoRoot);
    const upstream = await startScript(path.join(childDir, 'fake-upstream.js'), {});
    children.push(upstream);
    const upstreamOrigin = `http://127.0.0.1:${upstream.port}`;
    const bare = await startScript(path.join(childDir, 'bare-proxy.js'), { UPSTREAM: upstreamOrigin });
    children.push(bare);

    const path_ = '/v1/chat/completions';
    const targets: Target[] = [
      { name: 'direct', origin: upstreamOrigin, path: path_, headers: { authorization: 'Bearer sk-bench' } },
      {
        name: 'bare',
        origin: `http://127.0.0.1:${bare.port}`,
        path: path_,
        headers: { authorization: 'Bearer sk-bench' },
      },
    ];
    for (const t of targets) {
      const problem = await checkTarget(t);
      if (problem) throw new Error(`${t.name} target does not answer: ${problem}`);
    }

    let gatewayChild: Child | undefined;
    if (args.gateway) {
      const started = await startGateway(args, repoRoot, `${upstreamOrigin}/v1`);
      if ('reason' in started) {
        report.gateway = { status: 'failed', reason: started.reason };
        console.log(`gateway not measured: ${started.reason}`);
      } else {
        gatewayChild = started.child;
        gatewayDataDir = started.dataDir;
        children.push(started.child);
        targets.push(started.target);
        report.gateway = { status: 'measured' };
      }
    }

    console.log(
      `\nlatency at concurrency 1, 0 ms upstream (${s.latency} requests after ${s.latencyWarmup} warm-up)`,
    );
    const pidOf = (name: Target['name']) =>
      name === 'direct' ? upstream.pid : name === 'bare' ? bare.pid : gatewayChild?.pid;
    for (const t of targets) {
      const pid = pidOf(t.name);
      let cpuBefore: number | undefined;
      const r = await measureSequential(t, {
        requests: s.latency,
        warmup: s.latencyWarmup,
        maxMs: s.phaseMaxMs,
        onMeasuredStart: () => {
          cpuBefore = pid === undefined ? undefined : cpuTimeMs(pid);
        },
      });
      const cpuAfter = pid === undefined ? undefined : cpuTimeMs(pid);
      if (cpuBefore !== undefined && cpuAfter !== undefined && r.total.n > 0)
        report.cpuPerRequestUs[t.name] = Math.round(((cpuAfter - cpuBefore) * 1000) / r.total.n);
      note(t.name, r, 'total');
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
      note(t.name, r, 'firstByte');
      report.ttfbMs[t.name] = r.firstByte;
    }

    console.log(
      `\nthroughput: ${THROUGHPUT_CONNECTIONS} connections, ${THROUGHPUT_UPSTREAM_LATENCY_MS} ms upstream, ${s.durationS} s each`,
    );
    for (const t of targets) {
      // One unmeasured second first, so connection pools are grown and code is compiled for this load.
      await measureThroughput(t, {
        connections: THROUGHPUT_CONNECTIONS,
        durationS: 1,
        upstreamLatencyMs: THROUGHPUT_UPSTREAM_LATENCY_MS,
      });
      const r = await measureThroughput(t, {
        connections: THROUGHPUT_CONNECTIONS,
        durationS: s.durationS,
        upstreamLatencyMs: THROUGHPUT_UPSTREAM_LATENCY_MS,
      });
      console.log(
        `  ${t.name.padEnd(8)} ${Math.round(r.rps)} req/s, p50 ${r.latencyP50} ms, p99 ${r.latencyP99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`,
      );
      report.throughput[t.name] = r;
    }

    report.addedLatencyMs = {
      bare: added(report.latencyMs.bare, report.latencyMs.direct),
      gateway: added(report.latencyMs.gateway, report.latencyMs.direct),
    };
    report.addedTtfbMs = {
      bare: added(report.ttfbMs.bare, report.ttfbMs.direct),
      gateway: added(report.ttfbMs.gateway, report.ttfbMs.direct),
    };
    const { direct, bare: bareT, gateway } = report.throughput;
    if (direct && bareT) report.throughput.bareToDirect = bareT.rps / direct.rps;
    if (gateway && bareT) report.throughput.gatewayToBare = gateway.rps / bareT.rps;
    report.peakRssMB = {
      upstream: peakRssMB(upstream.pid),
      bare: peakRssMB(bare.pid),
      gateway: gatewayChild ? peakRssMB(gatewayChild.pid) : undefined,
    };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    if (gatewayDataDir) rmSync(gatewayDataDir, { recursive: true, force: true });
    release();
  }

  const table = markdownTable(report);
  console.log(`\n${table}\n`);
  if (report.gateway.status !== 'measured')
    console.log(
      `gateway: ${report.gateway.status}${report.gateway.reason ? ` — ${report.gateway.reason}` : ''}`,
    );
  const resultsDir = path.join(benchDir, 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, 'latest.json'), `${JSON.stringify({ ...report, table }, null, 2)}\n`);
  console.log(`written ${path.relative(repoRoot, path.join(resultsDir, 'latest.json'))}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
