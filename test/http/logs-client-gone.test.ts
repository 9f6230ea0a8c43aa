/**
 * A GET /v1/logs search whose client goes away is stopped where it runs on SQLite's log reader thread:
 * the listings behind it do not wait for it to end.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SQLITE_FILE } from '../../src/store/connect.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;
let workspaceId: string;
/** The records seeded: ids log_gone_1 to log_gone_<records>. */
let records = 0;

/**
 * Records `records` + 1 to `to`, in ASCII, whose metadata holds an escaped line break: a search parses every
 * one's JSON.
 */
function seed(to: number): void {
  const db = new Database(join(gateway.dataDir, SQLITE_FILE));
  try {
    db.pragma('busy_timeout = 5000');
    const pairs = Array.from(
      { length: 16 },
      (_, index) => `'key${index}', 'line-${index}' || char(10) || 'value-' || i`,
    ).join(', ');
    db.prepare(
      `with recursive n(i) as (select cast(? as integer) + 1 union all select i + 1 from n where i < ?)
       insert into logs (id, created_at_ms, workspace_id, trace_id, span_id, method, path, endpoint, status,
         is_attempt, stream, latency_ms, retry_count, metadata)
       select 'log_gone_' || i, i, ?, 'trace-' || i, 'span-' || i, 'POST', '/v1/chat/completions',
         'chat.completions', 200, 0, 0, 1.5, 0, json_object(${pairs}) from n`,
    ).run(records, to, workspaceId);
    records = to;
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  gateway = await startGateway();
  workspaceId = (await gateway.server.deps.lookups.apiKey(gateway.adminKey))!.workspace_id;
}, 120_000);

afterAll(async () => {
  await gateway?.close();
});

function logs(query: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${gateway.url}/logs?${query}`, {
    headers: { 'x-gateway-api-key': gateway.adminKey },
    signal,
  });
}

it('stops a search whose client went away: a listing sent next does not wait for it', async () => {
  // The search must run long enough to tell its end from its stop, and well within the reader's bound
  // (10 s) however loaded the machine: the records are doubled until it takes a second, up to 240,000.
  let took = 0;
  for (let next = 15_000; took < 1_000 && next <= 240_000; next *= 2) {
    seed(next);
    const started = performance.now();
    const whole = await logs('search=no-such-text');
    expect(whole.status).toBe(200);
    expect(await whole.json()).toMatchObject({ data: [], has_more: false });
    took = performance.now() - started;
  }
  expect(took).toBeGreaterThan(300);

  const client = new AbortController();
  const searching = logs('search=no-such-text', client.signal);
  await new Promise((resolve) => setTimeout(resolve, 100));
  client.abort();
  await expect(searching).rejects.toThrow();
  const gone = performance.now();
  // A filter other than time: a page query of the reader thread, as the search was.
  const listing = await logs('status=200&limit=2');
  const waited = performance.now() - gone;
  expect(listing.status).toBe(200);
  const page = (await listing.json()) as { data: Array<{ id: string }> };
  expect(page.data.map((record) => record.id)).toEqual([`log_gone_${records}`, `log_gone_${records - 1}`]);
  expect(waited).toBeLessThan(took / 2);
}, 120_000);
