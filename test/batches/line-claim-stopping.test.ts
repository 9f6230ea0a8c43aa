/**
 * A node that stops gives back the batch lines it holds, so that another node runs them at once. A round
 * whose claim of lines was under way when the stop began takes part in that: the lines its claim brings
 * back go back too, before the stop ends, rather than stay leased to a node that is gone until their lease
 * runs out (GATEWAY_BATCH_LEASE_MS, 30 s by default), holding the batch back. Over the embedded store (a
 * SQLite file), a running batch whose claim of lines has leased them in the store but not yet answered the
 * worker when the stop begins.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { pino } from 'pino';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { startBatchWorker } from '../../src/gateway/batches/batch-worker.js';
import type { GatewayDeps } from '../../src/gateway/deps.js';
import { SQLITE_FILE } from '../../src/store/connect.js';
import type { ClaimedLine } from '../../src/store/file-batch-types.js';
import { openStore, type Store } from '../../src/store/index.js';
import { runningBatch as runningBatchIn } from '../helpers/running-batch.js';

let dataDir: string;
let store: Store;
/** Another connection to the store's file, which reads the lines as they stand. */
let reader: BetterSqlite3.Database;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gateway-line-claim-stop-'));
  store = await openStore({ dataDir, masterKey: randomBytes(32) });
  reader = new BetterSqlite3(join(dataDir, SQLITE_FILE), { readonly: true });
});

afterEach(async () => {
  reader.close();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const runningBatch = (lines: number) => runningBatchIn(store, lines, 'Stopping');

function linesOf(batchId: string) {
  return reader
    .prepare('select line, state, lease_owner from batch_lines where batch_id = ? order by line')
    .all(batchId) as { line: number; state: string; lease_owner: string | null }[];
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

it('gives back the lines a claim under way brings back once the stop has begun', async () => {
  const batch = await runningBatch(4);
  // The claim leases its lines in the store, then holds its answer back until the stop has begun.
  const claimLines = store.batches.claimLines.bind(store.batches);
  let leased!: () => void;
  const claimLeased = new Promise<void>((resolve) => (leased = resolve));
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const claims = vi
    .spyOn(store.batches, 'claimLines')
    .mockImplementation(async (...args: Parameters<Store['batches']['claimLines']>) => {
      const claimed: ClaimedLine[] = await claimLines(...args);
      leased();
      await answered;
      return claimed;
    });
  const deps = {
    store,
    logger: pino({ level: 'silent' }),
    settings: {},
    blobs: {},
  } as unknown as GatewayDeps;
  const worker = startBatchWorker(deps, {
    nodeConcurrency: 1,
    batchConcurrency: 1,
    leaseMs: 30_000,
    pollMs: 10_000,
  });
  await claimLeased;
  expect(linesOf(batch.id).filter((line) => line.lease_owner !== null)).toHaveLength(2);

  const closing = worker.close(0);
  answer();
  await closing;
  // Once the stop has ended, no line is leased to the node, and none was run.
  expect(linesOf(batch.id)).toEqual(
    [0, 1, 2, 3].map((line) => ({ line, state: 'pending', lease_owner: null })),
  );
  await settle();
  expect(claims).toHaveBeenCalledTimes(1);
  expect(linesOf(batch.id)).toEqual(
    [0, 1, 2, 3].map((line) => ({ line, state: 'pending', lease_owner: null })),
  );
});
