/**
 * `npm start`'s semi-space flags are meant for the main thread's heap; V8 applies them to every isolate,
 * over a worker's `resourceLimits`, unless `startWorker` unsets them first (src/store/worker-heap.ts).
 * Run in a process of its own, started with the flags as `npm start` starts the gateway.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('startWorker', () => {
  it("gives a worker the young generation of its resourceLimits, and leaves the main thread's as the flags set it", async () => {
    const script = join(import.meta.dirname, 'worker-heap-process.ts');
    const { stdout } = await run(
      process.execPath,
      ['--max-semi-space-size=64', '--min-semi-space-size=64', '--import', 'tsx', script],
      { timeout: 60_000 },
    );
    const sizes = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, number>;
    // The flags win over a plain worker's 4 MB (64 MB here).
    expect(sizes.plain).toBeGreaterThanOrEqual(32);
    // startWorker: the 4 MB asked for.
    expect(sizes.started).toBeLessThanOrEqual(8);
    // The main thread's heap was sized at its start and keeps the flags' size (64 MB here).
    expect(sizes.main).toBeGreaterThanOrEqual(32);
  }, 90_000);
});
