// `npm run bench`: what the gateway costs on top of a call, measured against a direct call to a fake
// upstream and against a bare Node proxy (the floor for any Node gateway). Every server runs in its
// own process; this process only generates load. Flags: --quick (smoke run), --config '<json>' (send
// x-gateway-config instead of provider headers; `{{UPSTREAM}}` in it becomes the fake's /v1 URL),
// --build (run the production build first), --no-gateway, --gateway-entry <file> (another build's main.js).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem, platform } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCommand } from '../scripts/start-command.js';
import { compileChildren } from './compile-children.js';
import { measureSequential, type SequentialResult } from './measure-latency.js';
import { measureThroughput } from './measure-throughput.js';
import { cpuTimeMs, freePort, peakRssMB, startNodeServer, startScript, type Child } from './processes.js';
import { added, markdownTable, type BenchReport } from './report.js';
import { chatBody, type Target } from './target.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(benchDir, '..');
const HARD_LIMIT_MS = 240_000;

interface Args {
  quick: boolean;
  config?: string;
  build: boolean;
  gateway: boolean;
  gatewayEntry: string;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    quick: false,
    build: false,
    gateway: true,
    gatewayEntry: path.join(repoRoot, 'dist', 'main.js'),
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') args.quick = true;
    else if (a === '--build') args.build = true;
    else if (a === '--no-gateway') args.gateway = false;
    else if (a === '--config') args.config = argv[++i];
    else if (a === '--gateway-entry') args.gatewayEntry = path.resolve(argv[++i] ?? '');
    else if (a.startsWith('--config=')) args.config = a.slice('--config='.length);
    else
      throw new Error(
        `unknown argument ${a} (known: --quick, --config '<json>', --build, --no-gateway, --gateway-entry <file>)`,
      );
  }
  if (args.config !== undefined) JSON.parse(args.config); // fail early on a typo, before any process starts
  return args;
}

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

async function startGateway(
  args: Args,
  upstreamUrl: string,
): Promise<{ child: Child; target: Target; dataDir: string } | { reason: string }> {
  const entry = args.gatewayEntry;
  if (args.build) {
    console.log('building: npx tsc -p tsconfig.build.json');
    try {
      execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], {
        cwd: repoRoot,
        stdio: 'inherit',
        timeout: 120_000,
      });
    } catch (err) {
      return { reason: `production build failed: ${(err as Error).message}` };
    }
  }
  if (!existsSync(entry))
    return {
      reason: `${path.relative(repoRoot, entry)} is missing (run \`npm run build\`, or pass --build)`,
    };

  const start = startCommand(repoRoot);
  const nodeFlags = start.command === 'node' ? start.flags : [];
  console.log(
    `gateway: node ${[...nodeFlags, path.relative(repoRoot, entry)].join(' ')} (as npm start runs it)`,
  );
  const port = await freePort();
  const adminKey = `gw-bench-${randomBytes(12).toString('hex')}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gateway-bench-'));
  let child: Child;
  try {
    child = await startNodeServer(
      entry,
      {
        PORT: String(port),
        HOST: '127.0.0.1',
        GATEWAY_DATA_DIR: dataDir,
        GATEWAY_ADMIN_KEY: adminKey,
        LOG_LEVEL: 'warn',
      },
      port,
      nodeFlags,
    );
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    return { reason: `gateway did not start: ${(err as Error).message.slice(0, 2000)}` };
  }
  const routing: Record<string, string> =
    args.config !== undefined
      ? { 'x-gateway-config': args.config.replaceAll('{{UPSTREAM}}', upstreamUrl) }
      : { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': upstreamUrl };
  const target: Target = {
    name: 'gateway',
    origin: `http://127.0.0.1:${port}`,
    path: '/v1/chat/completions',
    headers: { 'x-gateway-api-key': adminKey, authorization: 'Bearer sk-bench', ...routing },
  };
  // One real request first: a gateway that answers /health but not chat is reported, not benchmarked.
  const probe = await checkTarget(target);
  if (probe) {
    await child.stop();
    rmSync(dataDir, { recursive: true, force: true });
    return { reason: `gateway is up but the chat request failed: ${probe}${tail(child)}` };
  }
  return { child, target, dataDir };
}

const tail = (child: Child) => {
  const t = child.stderrTail().trim();
  return t ? `\n  gateway stderr: ${t.slice(-1500)}` : '';
};

/** Undefined when the target answers a chat request with the fake's reply, else what went wrong. */
async function checkTarget(target: Target): Promise<string | undefined> {
  try {
    const res = await fetch(`${target.origin}${target.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...target.headers },
      body: chatBody(0),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (res.status !== 200) return `HTTP ${res.status}: ${text.slice(0, 500)}`;
    if (!text.includes('Hello from the bench upstream.')) return `unexpected body: ${text.slice(0, 500)}`;
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

function note(label: string, result: SequentialResult, which: 'total' | 'firstByte'): void {
  const d = result[which];
  const failed = result.failures ? ` (${result.failures} failed: ${result.firstFailure})` : '';
  console.log(
    `  ${label.padEnd(8)} n=${d.n} p50=${d.p50?.toFixed(3)} ms p99=${d.p99?.toFixed(3)} ms${failed}`,
  );
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const s = settings(args.quick);
  const children: Child[] = [];
  let gatewayDataDir: string | undefined;
  const killAll = () => {
    for (const c of children) c.process.kill('SIGKILL');
  };
  process.once('SIGINT', () => {
    killAll();
    process.exit(130);
  });
  const hardStop = setTimeout(() => {
    console.error(`bench exceeded ${HARD_LIMIT_MS / 1000} s; stopping`);
    killAll();
    process.exit(1);
  }, HARD_LIMIT_MS);

  const report: BenchReport = {
    date: new Date().toISOString(),
    mode: args.quick ? 'quick' : 'full',
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      node: process.version,
      platform: `${platform()} ${process.arch}`,
      totalMemMB: Math.round(totalmem() / 1024 / 1024),
    },
    settings: {
      latencyRequests: s.latency,
      ttfbRequests: s.ttfb,
      throughputConnections: THROUGHPUT_CONNECTIONS,
      throughputDurationS: s.durationS,
      throughputUpstreamLatencyMs: THROUGHPUT_UPSTREAM_LATENCY_MS,
      gatewayHeaders: args.config !== undefined ? 'config' : 'provider',
      ...(args.config !== undefined ? { gatewayConfig: args.config } : {}),
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
      const started = await startGateway(args, `${upstreamOrigin}/v1`);
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
    clearTimeout(hardStop);
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
