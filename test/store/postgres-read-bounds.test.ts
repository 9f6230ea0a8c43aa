/**
 * On PostgreSQL, log searches and analytics queries run under the bound SQLite's readers keep: a statement
 * timeout, answered with the same 408. A query waiting for a lock counts against it as one running long
 * does, so another connection's lock on the table read holds the query past its bound at will.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import type { AnalyticsQuery } from '../../src/store/types.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';

const BOUND_MS = 300;
/** How long a lock is held when nothing stops the query waiting for it. */
const LOCK_MS = 3_000;

const summary: AnalyticsQuery = {
  workspace_ids: ['ws'],
  period: 'hour',
  from_ms: 0,
  to_ms: 3_600_000,
  filters: {},
};

describeWithPostgres('log reads on PostgreSQL', () => {
  const schema = freshSchemaName('read_bounds');
  let store: Store;
  let locker: pg.Client;

  beforeAll(async () => {
    store = await openStore({
      databaseUrl: postgresUrl(),
      dataDir: '/nonexistent',
      masterKey: randomBytes(32),
      pgSchema: schema,
      readTimeoutMs: BOUND_MS,
    });
    locker = new pg.Client({ connectionString: postgresUrl() });
    await locker.connect();
  });

  afterAll(async () => {
    await locker?.end();
    await store?.close();
    await dropSchema(schema);
  });

  /** Holds `table` locked from another connection until the returned function (or LOCK_MS) ends it. */
  async function lock(table: string): Promise<() => Promise<void>> {
    await locker.query('begin');
    await locker.query(`lock table ${pg.escapeIdentifier(schema)}.${table} in access exclusive mode`);
    let held = true;
    const release = async () => {
      if (!held) return;
      held = false;
      await locker.query('commit');
    };
    setTimeout(() => void release(), LOCK_MS).unref();
    return release;
  }

  /** The read's error, or 'answered', and how long it took. */
  async function timed(read: Promise<unknown>): Promise<{ error: unknown; took: number }> {
    const started = performance.now();
    const error = await read.then(
      () => 'answered',
      (thrown: unknown) => thrown,
    );
    return { error, took: performance.now() - started };
  }

  it('stops an analytics query at its bound', async () => {
    const release = await lock('log_rollups');
    try {
      const { error, took } = await timed(store.analytics(summary));
      expect(error).toMatchObject({ code: 'request_timeout', status: 408 });
      expect((error as Error).message).toContain('analytics');
      expect(took).toBeLessThan(BOUND_MS + 1_500);
    } finally {
      await release();
    }
    expect(await store.analytics(summary)).toEqual([]);
  }, 20_000);

  it('stops a log search at its bound', async () => {
    const release = await lock('logs');
    try {
      const { error, took } = await timed(store.listLogs({ workspace_id: 'ws', limit: 10, search: 'text' }));
      expect(error).toMatchObject({ code: 'request_timeout', status: 408 });
      expect((error as Error).message).toContain('from_ms');
      expect(took).toBeLessThan(BOUND_MS + 1_500);
    } finally {
      await release();
    }
    expect(await store.listLogs({ workspace_id: 'ws', limit: 10, search: 'text' })).toEqual({
      data: [],
      has_more: false,
    });
  }, 20_000);

  it('leaves the bound to the reads it was set for', async () => {
    await store.analytics(summary);
    // The connection just used for a bounded read waits on for the lock, past the bound.
    const release = await lock('logs');
    const released = new Promise((resolve) => setTimeout(resolve, 3 * BOUND_MS)).then(release);
    const { error, took } = await timed(store.getLog('ws', 'log_none'));
    await released;
    expect(error).toBe('answered');
    expect(took).toBeGreaterThan(2 * BOUND_MS);
  }, 20_000);

  it("leaves the bound to the read within a caller's transaction", async () => {
    const { error, took } = await timed(
      store.transaction(async (repositories) => {
        expect(await repositories.analytics(summary)).toEqual([]);
        const release = await lock('logs');
        const released = new Promise((resolve) => setTimeout(resolve, 3 * BOUND_MS)).then(release);
        const started = performance.now();
        await repositories.getLog('ws', 'log_none');
        await released;
        return performance.now() - started;
      }),
    );
    expect(error).toBe('answered');
    expect(took).toBeGreaterThan(2 * BOUND_MS);
  }, 20_000);
});

describeWithPostgres('log reads on PostgreSQL under a stricter statement timeout', () => {
  const schema = freshSchemaName('read_bounds_cap');
  /** The operator's own statement timeout, shorter than the reads' bound. */
  const CAP_MS = 300;
  let store: Store;
  let locker: pg.Client;

  beforeAll(async () => {
    const url = new URL(postgresUrl());
    // Every statement of the gateway's connections capped, as ALTER ROLE … SET statement_timeout would.
    url.searchParams.set('options', `-c statement_timeout=${CAP_MS}`);
    store = await openStore({
      databaseUrl: url.toString(),
      dataDir: '/nonexistent',
      masterKey: randomBytes(32),
      pgSchema: schema,
      readTimeoutMs: 10 * LOCK_MS,
    });
    locker = new pg.Client({ connectionString: postgresUrl() });
    await locker.connect();
  });

  afterAll(async () => {
    await locker?.end();
    await store?.close();
    await dropSchema(schema);
  });

  it("keeps the server's shorter timeout for a log search", async () => {
    await locker.query('begin');
    await locker.query(`lock table ${pg.escapeIdentifier(schema)}.logs in access exclusive mode`);
    const release = setTimeout(() => void locker.query('commit'), LOCK_MS);
    try {
      const started = performance.now();
      const error = await store.listLogs({ workspace_id: 'ws', limit: 10, search: 'text' }).then(
        () => 'answered',
        (thrown: unknown) => thrown,
      );
      expect(error).toMatchObject({ code: 'request_timeout', status: 408 });
      expect(performance.now() - started).toBeLessThan(CAP_MS + 1_500);
    } finally {
      clearTimeout(release);
      await locker.query('commit');
    }
  }, 20_000);
});
