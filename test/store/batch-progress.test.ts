/**
 * A running batch's counts and usage live on its row: settling lines adds to them in the same
 * transaction, only for lines the settler still holds, and the migration that added them computes them
 * for batches already running from their lines.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as batchProgress from '../../src/store/migrations/0018_batch_progress.js';
import { openStore } from '../../src/store/index.js';
import type { SettledLine } from '../../src/store/file-batch-types.js';
import type { Store } from '../../src/store/types.js';
import { runningBatch as runningBatchIn } from '../helpers/running-batch.js';

let dataDir: string;
let store: Store;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'batch-progress-'));
  store = await openStore({ dataDir, masterKey: randomBytes(32) });
});

afterEach(async () => {
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function answered(input: number, output: number): SettledLine {
  return {
    state: 'succeeded',
    result: '{}',
    input_tokens: input,
    output_tokens: output,
    cached_tokens: 1,
    reasoning_tokens: 2,
    cost: (input + output) / 1000,
  };
}

const refused: SettledLine = {
  state: 'failed',
  result: '{}',
  input_tokens: null,
  output_tokens: null,
  cached_tokens: null,
  reasoning_tokens: null,
  cost: 0,
};

const runningBatch = (lines: number) => runningBatchIn(store, lines, 'Progress');

describe('batch progress on the batch row', () => {
  it('adds settled lines to the counts and usage, once, and only for the lines the owner holds', async () => {
    const batch = await runningBatch(4);
    const claimed = await store.batches.claimLines(batch.id, 'node-a', 60_000, 3);
    expect(claimed.map((line) => line.line)).toEqual([0, 1, 2]);

    const committed = await store.batches.settleLines(batch.id, 'node-a', [
      { line: 0, settled: answered(10, 5) },
      { line: 1, settled: refused },
      { line: 3, settled: answered(100, 100) }, // never claimed: not node-a's
    ]);
    expect([...committed].sort()).toEqual([0, 1]);
    // Settled again (a retried commit): nothing is added twice.
    expect(
      (await store.batches.settleLines(batch.id, 'node-a', [{ line: 0, settled: answered(10, 5) }])).size,
    ).toBe(0);
    // Another node's claim on a line it does not hold adds nothing.
    expect(
      (await store.batches.settleLines(batch.id, 'node-b', [{ line: 2, settled: answered(7, 7) }])).size,
    ).toBe(0);

    const read = await store.batches.getById(batch.id);
    expect(read).toMatchObject({ total: 4, completed: 1, failed: 1 });
    expect(read?.usage).toEqual({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 1 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 2 },
      total_tokens: 15,
    });
    expect(read?.cost).toBeCloseTo(0.015, 12);
    expect(await store.batches.hasOpenLines(batch.id)).toBe(true);

    // A line whose model has no price makes the batch's cost unknown, not a partial sum.
    await store.batches.settleLines(batch.id, 'node-a', [
      { line: 2, settled: { ...answered(1, 1), cost: null } },
    ]);
    expect((await store.batches.getById(batch.id))?.cost).toBeNull();
    expect(await store.batches.liveLeases(batch.id)).toBe(0);
    expect(await store.batches.lineCounts(batch.id)).toEqual({ total: 4, succeeded: 2, failed: 1, open: 1 });
  });

  it('is computed from the lines by the migration for a batch running when it is applied', async () => {
    const batch = await runningBatch(3);
    await store.batches.claimLines(batch.id, 'node-a', 60_000, 3);
    await store.batches.settleLines(batch.id, 'node-a', [
      { line: 0, settled: answered(10, 5) },
      { line: 1, settled: answered(20, 6) },
      { line: 2, settled: refused },
    ]);
    const before = await store.batches.getById(batch.id);

    const db = new Kysely<unknown>({
      dialect: new SqliteDialect({ database: new Database(join(dataDir, 'gateway.db')) }),
    });
    await batchProgress.down(db);
    await db
      .updateTable('batches' as never)
      .set({ completed: 0, failed: 0 } as never)
      .execute();
    await batchProgress.up(db);
    await db.destroy();

    const after = await store.batches.getById(batch.id);
    expect(after).toMatchObject({ completed: 2, failed: 1 });
    expect(after?.usage).toEqual(before?.usage);
    expect(after?.usage.total_tokens).toBe(41);
    // Lines settled before the migration carry no cost: the batch's cost is unknown.
    expect(before?.cost).toBeCloseTo(0.041, 12);
    expect(after?.cost).toBeNull();
    expect(await store.batches.hasOpenLines(batch.id)).toBe(false);
  });
});
