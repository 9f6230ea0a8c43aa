/**
 * The claim loop of the job workers (gateway/job-poller.ts) over a real store, SQLite and PostgreSQL:
 * however often it is poked while a round is claiming, it never runs more jobs at once than its
 * concurrency. And the wait before a job the store failed for runs again (retryDelayMs), and the rows of
 * failures a node keeps of work that may have gone on elsewhere (dropEndedRows).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  dropEndedRows,
  failingFor,
  jobOwner,
  retryDelayMs,
  startJobPoller,
  type FailureRow,
} from '../../src/gateway/job-poller.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';

describe('retryDelayMs', () => {
  it('waits longer for each failure in a row, within its bound', () => {
    for (let failures = 1; failures <= 40; failures++) {
      const full = Math.min(100 * 2 ** (failures - 1), 5000);
      for (let i = 0; i < 20; i++) {
        const delay = retryDelayMs(failures, 5000);
        expect(delay).toBeGreaterThanOrEqual(full / 2);
        expect(delay).toBeLessThanOrEqual(full);
      }
    }
    // Never past the bound given (a lease shorter than the usual bound).
    expect(retryDelayMs(30, 300)).toBeLessThanOrEqual(300);
  });
});

describe('dropEndedRows', () => {
  it('drops the rows of work that has not failed on the node for longer than a row’s gap', () => {
    const rows = new Map<string, FailureRow>();
    const start = 1_000_000;
    // A job given back after a failure, then run to its end on another node: never seen here again.
    rows.set('ended-elsewhere', { since: start, last: start });
    // A job failing in a row here, the last failure a moment ago.
    rows.set('failing', { since: start, last: start });
    failingFor(rows.get('failing')!, start + 150_000);
    dropEndedRows(rows, start + 150_001);
    expect([...rows.keys()]).toEqual(['failing']);
    // Within the gap, a row is kept.
    dropEndedRows(rows, start + 150_000 + 60_000);
    expect([...rows.keys()]).toEqual(['failing']);
  });
});

describe('startJobPoller on SQLite', () => {
  let dataDir: string;
  let store: Store;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'job-poller-'));
    store = await openStore({ dataDir, masterKey: randomBytes(32) });
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  pollerContract(() => store);
});

describeWithPostgres('startJobPoller on PostgreSQL', () => {
  const schema = freshSchemaName('job_poller');
  let store: Store;
  beforeAll(async () => {
    store = await openStore({
      databaseUrl: postgresUrl(),
      dataDir: '/nonexistent',
      masterKey: randomBytes(32),
      pgSchema: schema,
    });
  });
  afterAll(async () => {
    await store?.close();
    await dropSchema(schema);
  });
  pollerContract(() => store);
});

function pollerContract(storeOf: () => Store): void {
  it('runs at most its concurrency of jobs, poked while a round is claiming', async () => {
    const store = storeOf();
    const org = await store.createOrganisation({ name: 'o' });
    const ws = await store.createWorkspace({ organisation_id: org.id, name: 'w', slug: 'w' });
    for (let i = 0; i < 10; i++) {
      await store.jobs.enqueue({ kind: 'test.hold', workspace_id: ws.id, payload: { i }, max_attempts: 1 });
    }
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let atOnce = 0;
    let most = 0;
    const poller = startJobPoller(store, pino({ level: 'silent' }), {
      kinds: ['test.hold'],
      owner: jobOwner('test'),
      name: 'test worker',
      leaseMs: 30_000,
      pollMs: 10,
      concurrency: 2,
      async run() {
        most = Math.max(most, ++atOnce);
        await held;
        atOnce -= 1;
      },
    });
    // Pokes while the first round (and every one after) is claiming.
    const poking = setInterval(() => poller.poke(), 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    clearInterval(poking);
    poller.stop();
    expect(most).toBe(2);
    expect(poller.running.size).toBe(2);
    release();
    await Promise.allSettled([...poller.running]);
  });
}
