/**
 * Several processes claiming from one SQLite file: within one process better-sqlite3 runs statements
 * one after another, so only separate processes contend for the file's write lock for real.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';

const run = promisify(execFile);
const dataDir = mkdtempSync(join(tmpdir(), 'gateway-jobs-'));

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('jobs on SQLite, several processes on one file', () => {
  it('leases every job to exactly one process', async () => {
    const masterKey = randomBytes(32);
    const kind = 'contended';
    const store = await openStore({ dataDir, masterKey });
    const enqueued = new Set<string>();
    try {
      for (let i = 0; i < 200; i++) enqueued.add((await store.jobs.enqueue({ kind, payload: { i } })).id);
    } finally {
      await store.close();
    }
    const script = join(import.meta.dirname, 'claim-jobs-process.ts');
    const outputs = await Promise.all(
      ['p1', 'p2', 'p3'].map((owner) =>
        run(process.execPath, ['--import', 'tsx', script, dataDir, masterKey.toString('hex'), kind, owner], {
          timeout: 60_000,
        }),
      ),
    );
    const perProcess = outputs.map(
      ({ stdout }) => JSON.parse(stdout.trim().split('\n').at(-1) ?? '[]') as string[],
    );
    const claimed = perProcess.flat();
    expect(claimed).toHaveLength(enqueued.size);
    expect(new Set(claimed)).toEqual(enqueued);
  }, 90_000);
});
