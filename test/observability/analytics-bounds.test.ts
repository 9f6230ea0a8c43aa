/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form JSON answers */
/**
 * Analytics answers are bounded whatever the traffic: the groups of a metadata key come from callers
 * (`_user`), so only the most requested `limit` are kept and the rest are summed in one `(other)` row per
 * bucket; a timeseries holds at most 50,000 rows; a summary reads daily rows for the whole days of its range;
 * and on SQLite the query runs on the log reader thread, off the event loop. The rollup table is seeded
 * directly, with per-user request counts that tell which rows were read.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { ROLLUP_COLUMNS, ROLLUP_SUM_COLUMNS } from '../../src/store/rollups.js';
import type { AnalyticsQuery } from '../../src/store/types.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const DAY0 = Date.UTC(2026, 9, 1);
const USERS = 200;
/** User i makes i + 1 requests in each rollup row of theirs: the most requested are the last ones. */
const requestsOf = (user: number) => user + 1;
/** The requests of users 0 … n-1 in one row each. */
const firstUsersRequests = (n: number) => (n * (n + 1)) / 2;

type Period = 'minute' | 'hour' | 'day';

/** Rows of `_user` per period and bucket, each user's sums `factor` times its requests. */
function seed(file: string, workspaceId: string, rows: Array<[Period, number, number?]>): void {
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  const insert = db.prepare(
    `insert into log_rollups (${ROLLUP_COLUMNS.map((c) => `"${c}"`).join(', ')}) values (${ROLLUP_COLUMNS.map(() => '?').join(', ')})`,
  );
  db.transaction(() => {
    for (const [period, bucket, factor = 1] of rows) {
      for (let user = 0; user < USERS; user++) {
        const requests = requestsOf(user) * factor;
        const sums = ROLLUP_SUM_COLUMNS.map((column) =>
          column === 'requests' ? requests : column === 'latency_ms_sum' ? requests * 100 : 0,
        );
        // All of a user's requests in the 75–100 ms latency bucket.
        sums[ROLLUP_SUM_COLUMNS.indexOf('h05')] = requests;
        insert.run(
          workspaceId,
          period,
          bucket,
          'openai',
          'gpt-4o',
          'key',
          '',
          2,
          '_user',
          `user-${user}`,
          ...sums,
        );
      }
    }
  })();
  db.close();
}

describe('analytics answers over many groups', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startGateway();
    const self = (await (await get('/api-keys/self')).json()) as { workspace_id: string };
    const rows: Array<[Period, number, number?]> = [];
    // Day 0 and the first 6 hours of day 1 hourly, days 1 and 2 as daily rows of twice the requests (a
    // summary reading day 1's hourly rows instead would count other sums), day 3's first 10 hours hourly.
    for (let hour = 0; hour < 30; hour++) rows.push(['hour', DAY0 + hour * HOUR]);
    rows.push(['day', DAY0 + DAY, 2], ['day', DAY0 + 2 * DAY, 2]);
    for (let hour = 0; hour < 10; hour++) rows.push(['hour', DAY0 + 3 * DAY + hour * HOUR]);
    rows.push(['minute', DAY0]);
    seed(join(gateway.dataDir, 'gateway.db'), self.workspace_id, rows);
  });

  afterAll(async () => {
    await gateway?.close();
  });

  function get(path: string): Promise<Response> {
    return fetch(`${gateway.url}${path}`, { headers: { 'x-gateway-api-key': gateway.adminKey } });
  }

  async function json(path: string): Promise<any> {
    const response = await get(path);
    const body = await response.json();
    expect(response.status, JSON.stringify(body).slice(0, 300)).toBe(200);
    return body;
  }

  it('keeps the most requested groups of a summary and sums the rest as (other)', async () => {
    // 20:00 on day 0 to 05:00 on day 3: 4 hourly rows, days 1 and 2 daily (twice the requests), 5 hourly.
    const range = `from=${DAY0 + 20 * HOUR}&to=${DAY0 + 3 * DAY + 5 * HOUR}`;
    const per = 4 + 2 * 2 + 5;
    const body = await json(`/analytics/summary?${range}&group_by=metadata._user&limit=5`);
    expect(body.limit).toBe(5);
    expect(body.data).toHaveLength(6);
    const kept = body.data.filter((row: any) => row.other !== true);
    expect(kept.map((row: any) => row.group).sort()).toEqual(
      ['user-195', 'user-196', 'user-197', 'user-198', 'user-199'].sort(),
    );
    for (const row of kept) expect(row.requests).toBe(per * requestsOf(Number(row.group.slice(5))));
    const other = body.data.find((row: any) => row.other === true);
    expect(other).toMatchObject({ group: '(other)', requests: per * firstUsersRequests(195) });
    expect(other.latency_ms.avg).toBe(100);
    const total = await json(`/analytics/summary?${range}&group_by=metadata._user&limit=1000`);
    expect(total.data).toHaveLength(USERS);
    expect(total.data.some((row: any) => row.other === true)).toBe(false);
    const sum = (rows: any[]) => rows.reduce((n: number, row: any) => n + row.requests, 0);
    expect(sum(body.data)).toBe(sum(total.data));
    expect(other.requests).toBe(sum(total.data) - sum(kept));
  });

  it('keeps 100 groups by default', async () => {
    const body = await json(
      `/analytics/summary?from=${DAY0 + 2 * HOUR}&to=${DAY0 + 12 * HOUR}&group_by=metadata._user`,
    );
    expect(body.limit).toBe(100);
    expect(body.data).toHaveLength(101);
    expect(body.data.at(-1)).toMatchObject({ group: '(other)', other: true });
  });

  it('folds the same groups in every bucket of a timeseries', async () => {
    const body = await json(
      `/analytics/timeseries?from=${DAY0}&to=${DAY0 + 30 * HOUR}&interval=hour&group_by=metadata._user&limit=10`,
    );
    expect(body.data).toHaveLength(30 * 11);
    const buckets = new Map<number, any[]>();
    for (const row of body.data) buckets.set(row.bucket_ms, [...(buckets.get(row.bucket_ms) ?? []), row]);
    expect(buckets.size).toBe(30);
    for (const rows of buckets.values()) {
      expect(
        rows
          .filter((row) => row.other !== true)
          .map((row) => row.group)
          .sort(),
      ).toEqual(Array.from({ length: 10 }, (_, i) => `user-${190 + i}`).sort());
      expect(rows.find((row) => row.other === true)!.requests).toBe(firstUsersRequests(190));
    }
  });

  it('answers a timeseries with fewer groups when its buckets times groups would pass 50,000 rows', async () => {
    const body = await json(
      `/analytics/timeseries?from=${DAY0}&to=${DAY0 + 1500 * MINUTE}&interval=minute&group_by=metadata._user&limit=1000`,
    );
    // 1,500 buckets: 32 groups and (other), 49,500 rows at most.
    expect(body.limit).toBe(32);
    expect(body.data).toHaveLength(33);
    expect(body.data.at(-1)).toMatchObject({ other: true, requests: firstUsersRequests(USERS - 32) });
  });

  it('refuses a limit outside 1 to 1000, naming it', async () => {
    for (const limit of ['0', '1001', 'ten', '1.5', '-1']) {
      const response = await get(`/analytics/summary?group_by=metadata._user&limit=${limit}`);
      expect(response.status, limit).toBe(400);
      expect(((await response.json()) as any).error, limit).toMatchObject({
        code: 'invalid_query',
        param: 'limit',
      });
    }
  });
});

describe('analytics on SQLite', () => {
  it('runs on the log reader thread, so a request that ended before it started is not answered', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'analytics-reader-'));
    const store = await openStore({ dataDir, masterKey: randomBytes(32), analyticsMetadataKeys: ['_user'] });
    try {
      const query: AnalyticsQuery = {
        workspace_ids: ['ws_any'],
        period: 'hour',
        from_ms: DAY0,
        to_ms: DAY0 + DAY,
        filters: {},
      };
      expect(await store.analytics(query)).toEqual([]);
      const ended = new AbortController();
      ended.abort(new Error('the request ended'));
      await expect(store.analytics(query, { signal: ended.signal })).rejects.toThrow('the request ended');
    } finally {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
