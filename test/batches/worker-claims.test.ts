/**
 * What the batch worker holds, over the embedded store (a SQLite file), read from another connection.
 *
 * A node claims only lines it can start soon: the lines it claims ahead of a batch wait for that batch's
 * own calls on the node to end, so a node at its concurrency limit claims none of a batch it runs no line
 * of, and those lines stay free for another node to run.
 *
 * A node that stops gives back the batch lines it holds, so that another node runs them at once. A round
 * whose claim of lines was under way when the stop began takes part in that: the lines its claim brings
 * back go back too, before the stop ends, rather than stay leased to a node that is gone until their lease
 * runs out (GATEWAY_BATCH_LEASE_MS, 30 s by default), holding the batch back. A claim of jobs (a batch's
 * validation or finalization, a provider batch's submission or poll, a background response) is given back
 * the same way, its attempt with it, and none of its jobs starts on the stopping node, whose store is about
 * to close. The claims are held after the store has leased what they claim, until the stop has begun.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { VALIDATE_JOB } from '../../src/gateway/batches/batch-phases.js';
import { startBatchWorker } from '../../src/gateway/batches/batch-worker.js';
import type { GatewayDeps } from '../../src/gateway/deps.js';
import { jobOwner, startJobPoller } from '../../src/gateway/job-poller.js';
import { SQLITE_FILE } from '../../src/store/connect.js';
import { openStore, type Store } from '../../src/store/index.js';
import { runningBatch as runningBatchIn } from '../helpers/running-batch.js';
import { sleep, until } from './support.js';

let dataDir: string;
let store: Store;
/** Another connection to the store's file, which reads the lines as they stand. */
let reader: BetterSqlite3.Database;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gateway-worker-claims-'));
  store = await openStore({ dataDir, masterKey: randomBytes(32) });
  reader = new BetterSqlite3(join(dataDir, SQLITE_FILE), { readonly: true });
});

afterEach(async () => {
  reader.close();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const runningBatch = (lines: number, name = 'Stopping') => runningBatchIn(store, lines, name);

function linesOf(batchId: string) {
  return reader
    .prepare('select line, state, lease_owner from batch_lines where batch_id = ? order by line')
    .all(batchId) as { line: number; state: string; lease_owner: string | null }[];
}

const settle = () => sleep(100);

/** Makes `method` of `repository` do its work in the store (lease what it claims), then hold its answer
 * back until `answer` is called; `leased` resolves once the store has leased. */
function holdClaims<R extends object, M extends keyof R & string>(repository: R, method: M) {
  const original = (repository[method] as (...args: unknown[]) => Promise<unknown>).bind(repository);
  let leased!: () => void;
  const claimLeased = new Promise<void>((resolve) => (leased = resolve));
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const claims = vi.spyOn(repository, method as never).mockImplementation((async (...args: unknown[]) => {
    const claimed = await original(...args);
    leased();
    await answered;
    return claimed;
  }) as never);
  return { claims, leased: claimLeased, answer };
}

function batchWorker(concurrency = 1, pollMs = 10_000) {
  const deps = {
    store,
    logger: pino({ level: 'silent' }),
    settings: {},
    blobs: {},
  } as unknown as GatewayDeps;
  return startBatchWorker(deps, {
    nodeConcurrency: concurrency,
    batchConcurrency: concurrency,
    leaseMs: 30_000,
    pollMs,
  });
}

const leasedLines = (batchId: string) => linesOf(batchId).filter((line) => line.lease_owner !== null);

describe('a node at its concurrency limit', () => {
  it('claims no line ahead of a batch it runs none of, leaving them to other nodes', async () => {
    const first = await runningBatch(4, 'First');
    const second = await runningBatch(4, 'Second');
    // Each line's call waits until the test lets it go: the node is at its limit meanwhile.
    let letGo!: () => void;
    const held = new Promise<undefined>((resolve) => (letGo = () => resolve(undefined)));
    vi.spyOn(store.batches, 'callOf').mockReturnValue(held);
    const claims = vi.spyOn(store.batches, 'claimLines');
    const worker = batchWorker(2);
    try {
      await until(() => claims.mock.calls.length >= 1);
      await settle();
      // The batch running on the node: its 2 lines, and 2 claimed ahead to start as those end.
      const [running, other] = leasedLines(first.id).length > 0 ? [first, second] : [second, first];
      expect(leasedLines(running.id)).toHaveLength(4);
      expect(leasedLines(other.id)).toEqual([]);
    } finally {
      const closing = worker.close(0);
      letGo();
      await closing;
    }
  });
});

describe('a batch finalized by another node', () => {
  it('leaves no read of it kept on a node that ran lines of it', async () => {
    const batch = await runningBatch(2);
    // Its lines fail to run here (its call reads as gone): they stay leased, to be run again elsewhere.
    const reads = vi.spyOn(store.batches, 'callOf').mockResolvedValue(undefined);
    const worker = batchWorker(2, 50);
    try {
      await until(() => reads.mock.calls.length >= 1);
      await until(() => worker.batchesRead().includes(batch.id));
      // Another node ran its lines and queued its finalization, which has run.
      await store.batches.update(batch.id, { status: 'completed' }, ['in_progress']);
      await until(() => !worker.batchesRead().includes(batch.id));
    } finally {
      await worker.close(0);
    }
  });
});

it('gives back the lines a claim under way brings back once the stop has begun', async () => {
  const batch = await runningBatch(4);
  const held = holdClaims(store.batches, 'claimLines');
  const worker = batchWorker();
  await held.leased;
  expect(leasedLines(batch.id)).toHaveLength(2);

  const closing = worker.close(0);
  held.answer();
  await closing;
  // Once the stop has ended, no line is leased to the node, and none was run.
  expect(linesOf(batch.id)).toEqual(
    [0, 1, 2, 3].map((line) => ({ line, state: 'pending', lease_owner: null })),
  );
  await settle();
  expect(held.claims).toHaveBeenCalledTimes(1);
  expect(linesOf(batch.id)).toEqual(
    [0, 1, 2, 3].map((line) => ({ line, state: 'pending', lease_owner: null })),
  );
});

describe('a claim of jobs under way when the stop begins', () => {
  /** The job as the store holds it once the stop has ended, and again a moment later. */
  async function expectGivenBack(jobId: string) {
    const given = { status: 'queued', attempts: 0, lease_expires_at_ms: null };
    expect(await store.jobs.get(jobId)).toMatchObject(given);
    await settle();
    expect(await store.jobs.get(jobId)).toMatchObject(given);
  }

  it("gives back the batch worker's validation or finalization, not started", async () => {
    const job = await store.jobs.enqueue({ kind: VALIDATE_JOB, payload: { batch_id: 'batch_x' } });
    const held = holdClaims(store.jobs, 'claim');
    const validations = vi.spyOn(store.batches, 'getById');
    const worker = batchWorker();
    await held.leased;
    expect(await store.jobs.get(job.id)).toMatchObject({ status: 'running', attempts: 1 });

    const closing = worker.close(0);
    held.answer();
    await closing;
    await expectGivenBack(job.id);
    expect(held.claims).toHaveBeenCalledTimes(1);
    // A validation begins by reading its batch: none began.
    expect(validations).not.toHaveBeenCalled();
  });

  it("gives back the claim loop's jobs (provider batches, background responses), not run", async () => {
    const job = await store.jobs.enqueue({ kind: 'test.kind', payload: {} });
    const held = holdClaims(store.jobs, 'claim');
    const run = vi.fn(async () => undefined);
    const poller = startJobPoller(store, pino({ level: 'silent' }), {
      kinds: ['test.kind'],
      owner: jobOwner('test'),
      name: 'test worker',
      leaseMs: 30_000,
      pollMs: 10_000,
      concurrency: 1,
      run,
    });
    await held.leased;

    const stopping = poller.stop();
    held.answer();
    await stopping;
    await expectGivenBack(job.id);
    expect(run).not.toHaveBeenCalled();
    expect(poller.running.size).toBe(0);
  });
});
