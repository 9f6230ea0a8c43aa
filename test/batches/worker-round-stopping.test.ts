/**
 * A job worker's round that fails once the node is stopping (its store closed under the round) is not
 * followed by another, and its log line says so rather than that the worker tries again: the claim loop
 * of the background and provider-job workers (gateway/job-poller.ts) and the batch worker's. A round that
 * fails while the node runs is logged as tried again, and is. Over the embedded store (a SQLite file), a
 * due job in its queue, whose claim is held while another connection holds the file's write lock: it fails
 * once the store gives up waiting for it, or once the store is closed under it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import BetterSqlite3 from 'better-sqlite3';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startBatchWorker } from '../../src/gateway/batches/batch-worker.js';
import { VALIDATE_JOB } from '../../src/gateway/batches/batch-phases.js';
import type { GatewayDeps } from '../../src/gateway/deps.js';
import { jobOwner, startJobPoller } from '../../src/gateway/job-poller.js';
import { SQLITE_FILE } from '../../src/store/connect.js';
import { openStore, type Store } from '../../src/store/index.js';
import { sleep, until } from './support.js';

/** A logger keeping each line's message. */
function recordingLogger() {
  const messages: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        messages.push((JSON.parse(line) as { msg: string }).msg);
      }
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), messages };
}

const settle = () => sleep(50);

describe('a job worker round failing', () => {
  let dataDir: string;
  let store: Store;
  /** Another connection to the store's file, which takes its write lock. */
  let other: BetterSqlite3.Database;
  let storeClosed: boolean;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gateway-worker-round-'));
    store = await openStore({ dataDir, masterKey: randomBytes(32) });
    storeClosed = false;
    other = new BetterSqlite3(join(dataDir, SQLITE_FILE));
  });
  afterEach(async () => {
    if (other.inTransaction) other.exec('rollback');
    other.close();
    if (!storeClosed) await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Holds the file's write lock: a claim waits for it, and fails once the store gives up waiting. */
  const holdWriteLock = () => other.exec('begin immediate');
  const releaseWriteLock = () => other.exec('rollback');
  /** The claims the worker has made so far, each a round. */
  const claimsOf = (of: Store) => vi.spyOn(of.jobs, 'claim');
  const closeStore = async () => {
    storeClosed = true;
    await store.close();
  };

  const pollerOf = (logger: ReturnType<typeof recordingLogger>['logger'], run: () => Promise<void>) =>
    startJobPoller(store, logger, {
      kinds: ['test.kind'],
      owner: jobOwner('test'),
      name: 'test worker',
      leaseMs: 30_000,
      pollMs: 10,
      concurrency: 1,
      run,
    });

  it('while the node runs is logged as tried again, and is', async () => {
    await store.jobs.enqueue({ kind: 'test.kind', payload: {} });
    holdWriteLock();
    const { logger, messages } = recordingLogger();
    let ran = 0;
    const poller = pollerOf(logger, async () => void (ran += 1));
    try {
      // The store waits 5 s for the lock, then fails the claim.
      await until(() => messages.length === 1, 10_000);
      releaseWriteLock();
      await until(() => ran === 1);
    } finally {
      poller.stop();
    }
    expect(messages).toEqual(['test worker: a round failed; trying again']);
  }, 15_000);

  it('once the node is stopping says it is not tried again (the claim loop)', async () => {
    await store.jobs.enqueue({ kind: 'test.kind', payload: {} });
    holdWriteLock();
    const claims = claimsOf(store);
    const { logger, messages } = recordingLogger();
    const poller = pollerOf(logger, async () => undefined);
    await until(() => claims.mock.calls.length === 1);
    poller.stop();
    await closeStore();
    await until(() => messages.length === 1);
    await settle();
    expect(claims.mock.calls.length).toBe(1);
    expect(messages).toEqual(['test worker: a round failed; not trying again: the node is stopping']);
  });

  it('once the node is stopping says it is not tried again (the batch worker)', async () => {
    await store.jobs.enqueue({ kind: VALIDATE_JOB, payload: {} });
    holdWriteLock();
    const claims = claimsOf(store);
    const { logger, messages } = recordingLogger();
    const deps = { store, logger, settings: {}, blobs: {} } as unknown as GatewayDeps;
    const worker = startBatchWorker(deps, {
      nodeConcurrency: 1,
      batchConcurrency: 1,
      leaseMs: 30_000,
      pollMs: 10,
    });
    await until(() => claims.mock.calls.length === 1);
    await worker.close(0);
    await closeStore();
    await until(() => messages.length === 1);
    await settle();
    expect(claims.mock.calls.length).toBe(1);
    expect(messages).toEqual(['batch worker: a round failed; not trying again: the node is stopping']);
  });
});
