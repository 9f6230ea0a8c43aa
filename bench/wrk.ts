// Requests per second at a fixed number of connections, driven by wrk (saturation mode). wrk is C on
// epoll: on one core it drives far more requests than a Node server on another core can answer, where
// autocannon (JavaScript, one thread) could saturate first. Not an npm package: `apt-get install -y wrk`.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chatBody, type Target } from './target.js';

export interface WrkResult {
  rps: number;
  total: number;
  latencyP50: number;
  latencyP99: number;
  non2xx: number;
  errors: number;
}

/** wrk's version line, or undefined when wrk is not on the PATH. */
export function wrkVersion(): string | undefined {
  const r = spawnSync('wrk', ['--version'], { encoding: 'utf8', timeout: 5_000 });
  if (r.error) return undefined;
  // wrk prints its version and usage, and exits 1.
  return /^wrk \S+/.exec(`${r.stdout}${r.stderr}`)?.[0];
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

/** `1.23ms` → 1.23 (ms). */
function durationMs(text: string | undefined): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text ?? '');
  return m ? Number(m[1]) * UNIT_MS[m[2]] : NaN;
}

export function parseWrk(out: string): WrkResult {
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    total: num(/(\d+) requests in/),
    latencyP50: durationMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1]),
    latencyP99: durationMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1]),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    errors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
  };
}

/** One wrk run (one thread) under `taskset -c <pin>`; killed if it outlives its duration by 15 s. */
export async function runWrk(
  target: Target,
  options: { connections: number; durationS: number; upstreamLatencyMs: number; pin: string },
): Promise<WrkResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gateway-bench-wrk-'));
  const script = path.join(dir, 'post.lua');
  // A Lua long string holds the JSON body verbatim.
  writeFileSync(script, `wrk.method = "POST"\nwrk.body = [==[${chatBody(options.upstreamLatencyMs)}]==]\n`);
  const headers = Object.entries({ 'content-type': 'application/json', ...target.headers });
  const args = [
    ...['-c', options.pin, 'wrk', '-t', '1', '-c', String(options.connections)],
    ...['-d', `${options.durationS}s`, '--timeout', '10s', '--latency', '-s', script],
    ...headers.flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
    `${target.origin}${target.path}`,
  ];
  const child = spawn('taskset', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // Ctrl-C and the hard stop end this process with process.exit, which runs 'exit' listeners only.
  const onExit = () => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  const guard = setTimeout(() => child.kill('SIGKILL'), (options.durationS + 15) * 1000);
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', resolve);
    });
    const result = parseWrk(out);
    if (code !== 0 || Number.isNaN(result.rps))
      throw new Error(`wrk failed (exit ${code}): ${out.slice(-1000)}`);
    return result;
  } finally {
    clearTimeout(guard);
    process.removeListener('exit', onExit);
    rmSync(dir, { recursive: true, force: true });
  }
}
