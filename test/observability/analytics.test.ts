/**
 * Analytics over the log's rollups, on a real SQLite file and on PostgreSQL: generated records are inserted
 * as the log writer inserts them, and every answer is checked against the same sums computed from the
 * records themselves.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as logRollups from '../../src/store/migrations/0013_log_rollups.js';
import { percentile } from '../../src/server/routes/analytics.js';
import { openStore } from '../../src/store/index.js';
import { LATENCY_BOUNDS_MS, latencyBucket } from '../../src/store/rollups.js';
import type { AnalyticsQuery, LogRecord, Store } from '../../src/store/types.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { logRecord } from '../store/store-contract.js';

const HOUR = 3_600_000;
const START = Date.UTC(2026, 10, 1);

/** A deterministic spread of records over two days: providers, models, keys, statuses, latencies, users. */
function generate(workspaceId: string, count: number): LogRecord[] {
  const providers = ['openai', 'anthropic', 'google'];
  const models = ['gpt-4o-mini', 'claude-3-5-haiku', 'gemini-2.0-flash', 'gpt-4o'];
  const records: LogRecord[] = [];
  for (let i = 0; i < count; i++) {
    const status = i % 17 === 0 ? 502 : i % 11 === 0 ? 429 : 200;
    records.push(
      logRecord(workspaceId, {
        created_at_ms: START + ((i * 7919) % (48 * HOUR)),
        provider: providers[i % 3],
        model: models[i % 4],
        api_key_id: `key_${i % 5}`,
        status,
        latency_ms: ((i * 37) % 4000) + 0.5,
        prompt_tokens: status === 200 ? 100 + (i % 50) : null,
        completion_tokens: status === 200 ? 20 + (i % 10) : null,
        cost: status === 200 ? (i % 7 === 0 ? null : 0.0001 * (i % 13)) : 0,
        metadata: i % 4 === 0 ? { _user: `user-${i % 6}` } : {},
        is_attempt: i % 23 === 0,
      }),
    );
  }
  return records;
}

interface Sums {
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
  latencies: number[];
}

function expectedSums(
  records: LogRecord[],
  keyOf: (record: LogRecord) => string | null,
): Map<string | null, Sums> {
  const out = new Map<string | null, Sums>();
  for (const record of records) {
    if (record.is_attempt) continue;
    const key = keyOf(record);
    let sums = out.get(key);
    if (!sums) {
      sums = { requests: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0, cost: 0, latencies: [] };
      out.set(key, sums);
    }
    sums.requests += 1;
    sums.errors += record.status >= 400 ? 1 : 0;
    sums.prompt_tokens += record.prompt_tokens ?? 0;
    sums.completion_tokens += record.completion_tokens ?? 0;
    sums.cost += record.cost ?? 0;
    sums.latencies.push(record.latency_ms);
  }
  return out;
}

function suite(open: () => Promise<{ store: Store; close: () => Promise<void> }>): void {
  let store: Store;
  let close: () => Promise<void>;
  let workspaceId: string;
  let records: LogRecord[];
  const base = (): Omit<AnalyticsQuery, 'period'> => ({
    workspace_ids: [workspaceId],
    from_ms: START,
    to_ms: START + 48 * HOUR,
    filters: {},
  });

  beforeAll(async () => {
    ({ store, close } = await open());
    const org = await store.createOrganisation({ name: 'Analytics' });
    const workspace = await store.createWorkspace({ organisation_id: org.id, name: 'A', slug: 'a' });
    workspaceId = workspace.id;
    records = generate(workspaceId, 6000);
    for (let i = 0; i < records.length; i += 500) await store.insertLogs(records.slice(i, i + 500));
  });

  afterAll(async () => {
    await close?.();
  });

  it('sums per group match the records, from daily, hourly and minute rollups alike', async () => {
    const expected = expectedSums(records, (record) => record.model);
    for (const period of ['day', 'hour', 'minute'] as const) {
      const rows = await store.analytics({ ...base(), period, group_by: 'model' });
      expect(rows.map((row) => row.group).sort()).toEqual([...expected.keys()].sort());
      for (const row of rows) {
        const sums = expected.get(row.group)!;
        expect(row.bucket_ms).toBeNull();
        expect(row).toMatchObject({
          requests: sums.requests,
          errors: sums.errors,
          prompt_tokens: sums.prompt_tokens,
          completion_tokens: sums.completion_tokens,
        });
        expect(row.cost).toBeCloseTo(sums.cost, 9);
        expect(row.histogram.reduce((a, b) => a + b, 0)).toBe(sums.requests);
        // A percentile read from the histogram lies in the bucket of the true one.
        const sorted = [...sums.latencies].sort((a, b) => a - b);
        const p90 = sorted[Math.ceil(0.9 * sorted.length) - 1];
        const estimate = percentile(row.histogram, 90)!;
        const bucket = latencyBucket(p90);
        expect(estimate).toBeGreaterThanOrEqual(bucket === 0 ? 0 : LATENCY_BOUNDS_MS[bucket - 1]);
        expect(estimate).toBeLessThanOrEqual(LATENCY_BOUNDS_MS[bucket]);
      }
    }
  });

  it('buckets by time, filters, and groups by a rolled-up metadata key', async () => {
    const daily = await store.analytics({
      ...base(),
      period: 'hour',
      interval_ms: 24 * HOUR,
      filters: { provider: 'openai' },
    });
    const expected = expectedSums(
      records.filter((record) => record.provider === 'openai'),
      (record) => String(record.created_at_ms - (record.created_at_ms % (24 * HOUR))),
    );
    expect(daily.map((row) => [String(row.bucket_ms), row.requests])).toEqual(
      [...expected.entries()]
        .sort(([a], [b]) => Number(a) - Number(b))
        .map(([bucket, sums]) => [bucket, sums.requests]),
    );

    const users = await store.analytics({
      ...base(),
      period: 'hour',
      group_by: { metadata: '_user' },
      filters: { status_class: 2 },
    });
    const byUser = expectedSums(
      records.filter((record) => record.metadata._user !== undefined && record.status < 300),
      (record) => record.metadata._user,
    );
    expect(Object.fromEntries(users.map((row) => [row.group, row.requests]))).toEqual(
      Object.fromEntries([...byUser.entries()].map(([user, sums]) => [user, sums.requests])),
    );

    const one = await store.analytics({
      ...base(),
      period: 'minute',
      group_by: 'api_key_id',
      filters: { metadata: { key: '_user', value: 'user-0' }, model: 'gpt-4o-mini' },
    });
    const expectedOne = expectedSums(
      records.filter((record) => record.metadata._user === 'user-0' && record.model === 'gpt-4o-mini'),
      (record) => record.api_key_id,
    );
    expect(Object.fromEntries(one.map((row) => [row.group, row.requests]))).toEqual(
      Object.fromEntries([...expectedOne.entries()].map(([key, sums]) => [key, sums.requests])),
    );
  });

  it('keeps the groups of the most requests and sums the rest in one row per bucket', async () => {
    const all = await store.analytics({ ...base(), period: 'hour', group_by: 'model' });
    const ranked = [...all].sort(
      (a, b) => b.requests - a.requests || (a.group! < b.group! ? -1 : a.group! > b.group! ? 1 : 0),
    );
    const limited = await store.analytics({ ...base(), period: 'hour', group_by: 'model', group_limit: 2 });
    expect(limited.filter((row) => !row.other).map((row) => row.group)).toEqual(
      ranked
        .slice(0, 2)
        .map((row) => row.group)
        .sort(),
    );
    const other = limited.find((row) => row.other)!;
    expect(other.group).toBeNull();
    const rest = ranked.slice(2);
    expect(other).toMatchObject({
      requests: rest.reduce((n, row) => n + row.requests, 0),
      errors: rest.reduce((n, row) => n + row.errors, 0),
      prompt_tokens: rest.reduce((n, row) => n + row.prompt_tokens, 0),
    });
    expect(other.histogram.reduce((a, b) => a + b, 0)).toBe(other.requests);

    // The same groups kept in every bucket; each bucket's sums whole.
    const hourly = { ...base(), period: 'hour' as const, interval_ms: HOUR, group_by: 'model' as const };
    const series = await store.analytics({ ...hourly, group_limit: 1 });
    const unlimited = await store.analytics(hourly);
    const perBucket = (rows: typeof series) =>
      Object.fromEntries(
        [...new Set(rows.map((row) => row.bucket_ms))].map((bucket) => [
          bucket,
          rows.filter((row) => row.bucket_ms === bucket).reduce((n, row) => n + row.requests, 0),
        ]),
      );
    expect(perBucket(series)).toEqual(perBucket(unlimited));
    const buckets = new Set(unlimited.map((row) => row.bucket_ms)).size;
    expect(buckets).toBeGreaterThan(10);
    expect(series).toHaveLength(2 * buckets);
    expect(new Set(series.filter((row) => !row.other).map((row) => row.group))).toEqual(
      new Set([ranked[0].group]),
    );
  });

  it("reads a summary's whole days from the daily rows, its partial ones from the hourly, with the same sums", async () => {
    // Records from START to about START + 13 h, a few more logged at either end of the range below.
    const edges = [START - 2 * HOUR, START - HOUR, START + 24 * HOUR, START + 29 * HOUR].map(
      (created_at_ms) =>
        logRecord(workspaceId, { created_at_ms, provider: 'openai', model: 'gpt-4o', status: 200 }),
    );
    await store.insertLogs(edges);
    const range = { ...base(), from_ms: START - 3 * HOUR, to_ms: START + 30 * HOUR, period: 'hour' as const };
    const hourly = await store.analytics({ ...range, group_by: 'provider' });
    const split = await store.analytics({
      ...range,
      whole_days: { from_ms: START, to_ms: START + 24 * HOUR },
      group_by: 'provider',
    });
    const withoutCost = (rows: typeof hourly) => rows.map(({ cost: _cost, ...rest }) => rest);
    expect(withoutCost(split)).toEqual(withoutCost(hourly));
    const expected = expectedSums(
      [...records, ...edges].filter((r) => r.created_at_ms >= range.from_ms && r.created_at_ms < range.to_ms),
      (record) => record.provider,
    );
    expect(Object.fromEntries(split.map((row) => [row.group, row.requests]))).toEqual(
      Object.fromEntries([...expected].map(([provider, sums]) => [provider, sums.requests])),
    );
  });

  it('reads only its workspaces and its range', async () => {
    expect(await store.analytics({ ...base(), period: 'hour', workspace_ids: ['ws_nobody'] })).toEqual([]);
    const firstHour = await store.analytics({ ...base(), period: 'minute', to_ms: START + HOUR });
    const expected = records.filter(
      (record) => !record.is_attempt && record.created_at_ms < START + HOUR,
    ).length;
    expect(firstHour[0].requests).toBe(expected);
  });
}

describe('analytics on SQLite', () => {
  suite(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'analytics-'));
    const store = await openStore({ dataDir, masterKey: randomBytes(32), analyticsMetadataKeys: ['_user'] });
    return {
      store,
      close: async () => {
        await store.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  });
});

describeWithPostgres('analytics on PostgreSQL', () => {
  suite(async () => {
    const schema = freshSchemaName('analytics');
    const store = await openStore({
      databaseUrl: postgresUrl(),
      dataDir: '/nonexistent',
      masterKey: randomBytes(32),
      pgSchema: schema,
      analyticsMetadataKeys: ['_user'],
    });
    return {
      store,
      close: async () => {
        await store.close();
        await dropSchema(schema);
      },
    };
  });
});

describe('rollups of records logged before the rollups existed', () => {
  it('are made by the migration that adds them', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'analytics-backfill-'));
    const store = await openStore({ dataDir, masterKey: randomBytes(32) });
    try {
      const org = await store.createOrganisation({ name: 'Backfill' });
      const workspace = await store.createWorkspace({ organisation_id: org.id, name: 'B', slug: 'b' });
      const records = generate(workspace.id, 2000);
      await store.insertLogs(records);
      const query: AnalyticsQuery = {
        workspace_ids: [workspace.id],
        period: 'hour',
        from_ms: START,
        to_ms: START + 48 * HOUR,
        interval_ms: HOUR,
        group_by: 'provider',
        filters: {},
      };
      const before = await store.analytics(query);

      // The rollups dropped and the migration run again over the logged records.
      const db = new Kysely<unknown>({
        dialect: new SqliteDialect({ database: new Database(join(dataDir, 'gateway.db')) }),
      });
      await logRollups.down(db);
      await logRollups.up(db);
      await db.destroy();

      const after = await store.analytics(query);
      // Sums in another order: costs may differ in the last bits.
      const withoutCost = (rows: typeof before) => rows.map(({ cost: _cost, ...rest }) => rest);
      expect(withoutCost(after)).toEqual(withoutCost(before));
      after.forEach((row, i) => expect(row.cost).toBeCloseTo(before[i].cost, 12));
      expect(after.reduce((sum, row) => sum + row.requests, 0)).toBe(
        records.filter((r) => !r.is_attempt).length,
      );
    } finally {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
