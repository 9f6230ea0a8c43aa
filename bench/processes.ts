// Child processes for the servers under test, so none of them shares an event loop with the load
// generator (or with each other).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

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

/**
 * Spawns `node <nodeArgs>`, under `taskset -c <pin>` when a CPU list is given: taskset sets the affinity
 * and execs node, so the pid is node's and every thread node starts inherits the affinity.
 */
function spawnNode(nodeArgs: string[], env: Record<string, string>, stdout: 'pipe' | 'ignore', pin?: string) {
  const [command, args] =
    pin === undefined
      ? [process.execPath, nodeArgs]
      : ['taskset', ['-c', pin, process.execPath, ...nodeArgs]];
  return spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', stdout, 'pipe'] });
}

/** Starts a JavaScript server script and waits for its `READY <port>` line. */
export function startScript(
  script: string,
  env: Record<string, string>,
  { pin, timeoutMs = 15_000 }: { pin?: string; timeoutMs?: number } = {},
): Promise<Child> {
  const child = spawnNode([script], env, 'pipe', pin);
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

/** Kills every child on Ctrl-C or once `hardLimitMs` has passed; call the returned function when done. */
export function guardChildren(children: Child[], hardLimitMs: number): () => void {
  const killAll = () => {
    for (const c of children) c.process.kill('SIGKILL');
  };
  const onSigint = () => {
    killAll();
    process.exit(130);
  };
  process.once('SIGINT', onSigint);
  const hardStop = setTimeout(() => {
    console.error(`bench exceeded ${hardLimitMs / 1000} s; stopping`);
    killAll();
    process.exit(1);
  }, hardLimitMs);
  return () => {
    clearTimeout(hardStop);
    process.removeListener('SIGINT', onSigint);
  };
}

/** Starts `node <nodeFlags> <entry>` and polls `GET /health` until it answers 200 (bounded by `timeoutMs`). */
export async function startNodeServer(
  entry: string,
  env: Record<string, string>,
  port: number,
  nodeFlags: string[] = [],
  pin?: string,
  timeoutMs = 20_000,
): Promise<Child> {
  const child = spawnNode([...nodeFlags, entry], env, 'ignore', pin);
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
 * CPU time (user + system, every thread, exited ones included) a live process has used so far, in
 * milliseconds, from /proc/<pid>/stat; undefined where /proc is not available. Sampled before and after a
 * phase, it gives the CPU a request costs.
 */
export function cpuTimeMs(pid: number): number | undefined {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

/**
 * Waits until a server has been idle (under 2 ms of CPU in 200 ms) or 5 s have passed: what a round of
 * load left it to do (records to write, spans to send, garbage) is that round's cost, and must not run on
 * the server core while the next round loads another server.
 */
export async function waitUntilIdle(server: Child): Promise<void> {
  const deadline = Date.now() + 5_000;
  let last = cpuTimeMs(server.pid) ?? 0;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = cpuTimeMs(server.pid) ?? 0;
    if (now - last < 2) return;
    last = now;
  }
}

/** Busy (everything but idle and iowait) and softirq time of one core so far, in ms, from /proc/stat. */
export function coreTimesMs(core: number): { busy: number; softirq: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`cpu${core} `));
    if (!line) return undefined;
    // user nice system idle iowait irq softirq steal (guest time is already counted in user)
    const t = line.trim().split(/\s+/).slice(1, 9).map(Number);
    return { busy: (t[0] + t[1] + t[2] + t[5] + t[6] + t[7]) * 10, softirq: t[6] * 10 };
  } catch {
    return undefined;
  }
}
