// Child processes for the servers under test, so none of them shares an event loop with the load
// generator (or with each other).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export interface Child {
  process: ChildProcess;
  pid: number;
  port: number;
  /** The last few KB of the child's stderr, to say why it failed. */
  stderrTail(): string;
  stop(): Promise<void>;
}

function tailCollector(limit = 8192) {
  let tail = '';
  return {
    push(chunk: Buffer) {
      tail = (tail + chunk.toString('utf8')).slice(-limit);
    },
    get: () => tail,
  };
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const killTimer = setTimeout(() => child.kill('SIGKILL'), 3_000);
      child.once('exit', () => {
        clearTimeout(killTimer);
        resolve();
      });
      child.kill('SIGTERM');
    });
}

/** Starts a JavaScript server script and waits for its `READY <port>` line. */
export function startScript(script: string, env: Record<string, string>, timeoutMs = 15_000): Promise<Child> {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr = tailCollector();
  child.stderr!.on('data', stderr.push);
  return new Promise<Child>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not print READY within ${timeoutMs} ms: ${stderr.get()}`));
    }, timeoutMs);
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /READY (\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({
          process: child,
          pid: child.pid!,
          port: Number(match[1]),
          stderrTail: stderr.get,
          stop: stopper(child),
        });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with code ${code}: ${stderr.get()}`));
    });
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts `node <nodeFlags> <entry>` and polls `GET /health` until it answers 200 (bounded by `timeoutMs`). */
export async function startNodeServer(
  entry: string,
  env: Record<string, string>,
  port: number,
  nodeFlags: string[] = [],
  timeoutMs = 20_000,
): Promise<Child> {
  const child = spawn(process.execPath, [...nodeFlags, entry], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr = tailCollector();
  child.stderr!.on('data', stderr.push);
  const handle: Child = {
    process: child,
    pid: child.pid!,
    port,
    stderrTail: stderr.get,
    stop: stopper(child),
  };
  const deadline = Date.now() + timeoutMs;
  let lastProblem = 'no answer yet';
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`${entry} exited with code ${child.exitCode}: ${stderr.get()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.status === 200) return handle;
      lastProblem = `GET /health answered ${res.status}`;
    } catch (err) {
      lastProblem = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await handle.stop();
  throw new Error(`${entry} not healthy within ${timeoutMs} ms (${lastProblem}): ${stderr.get()}`);
}

/** Peak resident set size (VmHWM) of a live process, in MB; undefined where /proc is not available. */
export function peakRssMB(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
    return match ? Math.round((Number(match[1]) / 1024) * 10) / 10 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU time (user + system, every thread) a live process has used so far, in milliseconds; undefined where
 * /proc is not available. Sampled before and after a phase, it gives the CPU a request costs.
 */
export function cpuTimeMs(pid: number): number | undefined {
  try {
    let ticks = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    return ticks * 10; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}
