/**
 * How fast analytics answer over many log records: N generated request records (default 100,000) spread over
 * 30 days, inserted as the log writer inserts them (batches of 500, rollups in the same transaction), then
 * each query of the analytics API run 20 times after a warm-up, timed in-process through the store.
 * `npx tsx bench/analytics.ts [records] [--postgres]`; prints the insert rate and each query's p50 / max in
 * milliseconds as JSON. PostgreSQL at DATABASE_URL (default 127.0.0.1/test), in a schema of its own.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { openStore } from '../src/store/index.js';
import { newId } from '../src/store/ids.js';
import type { AnalyticsQuery, LogRecord, Store } from '../src/store/types.js';
import { round, summarise } from './stats.js';

const RECORDS = Number(process.argv.find((arg) => /^\d+$/.test(arg)) ?? 100_000);
const POSTGRES = process.argv.includes('--postgres');
const DAY = 86_400_000;
const END = Date.UTC(2026, 10, 1);
const START = END - 30 * DAY;

function record(workspaceId: string, i: number): LogRecord {
  const status = i % 29 === 0 ? 502 : i % 13 === 0 ? 429 : 200;
  return {
    id: newId('log'),
    // In time order, as a log is written.
    created_at_ms: START + Math.floor((i / RECORDS) * 30 * DAY),
    organisation_id: 'org_bench',
    workspace_id: workspaceId,
    api_key_id: `key_${i % 20}`,
    trace_id: `t${i}`,
    span_id: `s${i}`,
    parent_span_id: null,
    span_name: null,
    method: 'POST',
    path: '/v1/chat/completions',
    endpoint: 'chat',
    provider: ['openai', 'anthropic', 'google', 'bedrock'][i % 4],
    model: `model-${i % 12}`,
    target: null,
    status,
    is_attempt: false,
    stream: i % 3 === 0,
    latency_ms: 50 + ((i * 7919) % 5000),
    ttfb_ms: null,
    prompt_tokens: 200 + (i % 300),
    completion_tokens: 50 + (i % 80),
    total_tokens: 250 + (i % 380),
    cached_tokens: null,
    reasoning_tokens: null,
    cost: 0.0001 * (i % 17),
    cache_status: null,
    cache_similarity: null,
    retry_count: 0,
    error_code: null,
    error_message: null,
    metadata: { _user: `user-${i % 200}` },
    request_body: null,
    response_body: null,
    hook_results: null,
    prompt_id: i % 5 === 0 ? `prompt_${i % 3}` : null,
    prompt_version: null,
  };
}

async function open(): Promise<{ store: Store; close: () => Promise<void> }> {
  const masterKey = randomBytes(32);
  if (POSTGRES) {
    const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    const schema = `bench_analytics_${randomBytes(4).toString('hex')}`;
    const store = await openStore({
      databaseUrl: url,
      dataDir: '/nonexistent',
      masterKey,
      pgSchema: schema,
      analyticsMetadataKeys: ['_user'],
    });
    return {
      store,
      async close() {
        await store.close();
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`drop schema ${pg.escapeIdentifier(schema)} cascade`);
        await client.end();
      },
    };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-analytics-'));
  const store = await openStore({ dataDir, masterKey, analyticsMetadataKeys: ['_user'] });
  return {
    store,
    async close() {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function main(): Promise<void> {
  const { store, close } = await open();
  try {
    const org = await store.createOrganisation({ name: 'Bench' });
    const workspace = await store.createWorkspace({ organisation_id: org.id, name: 'Bench', slug: 'bench' });
    const started = performance.now();
    for (let i = 0; i < RECORDS; i += 500) {
      const batch: LogRecord[] = [];
      for (let j = i; j < Math.min(i + 500, RECORDS); j++) batch.push(record(workspace.id, j));
      await store.insertLogs(batch);
    }
    const insertSeconds = (performance.now() - started) / 1000;

    const base = { workspace_ids: [workspace.id], filters: {} };
    const queries: Record<string, AnalyticsQuery> = {
      summary_30d_by_model: { ...base, period: 'day', from_ms: START, to_ms: END, group_by: 'model' },
      summary_30d_by_model_hourly_rows: {
        ...base,
        period: 'hour',
        from_ms: START,
        to_ms: END,
        group_by: 'model',
      },
      daily_30d_by_provider: {
        ...base,
        period: 'day',
        from_ms: START,
        to_ms: END,
        interval_ms: DAY,
        group_by: 'provider',
      },
      hourly_7d_by_api_key: {
        ...base,
        period: 'hour',
        from_ms: END - 7 * DAY,
        to_ms: END,
        interval_ms: 3_600_000,
        group_by: 'api_key_id',
      },
      minute_2h_by_status: {
        ...base,
        period: 'minute',
        from_ms: END - 7_200_000,
        to_ms: END,
        interval_ms: 60_000,
        group_by: 'status_class',
      },
      summary_30d_by_user: {
        ...base,
        period: 'day',
        from_ms: START,
        to_ms: END,
        group_by: { metadata: '_user' },
      },
      daily_30d_one_model: {
        ...base,
        period: 'day',
        from_ms: START,
        to_ms: END,
        interval_ms: DAY,
        filters: { model: 'model-3' },
      },
    };
    const results: Record<string, unknown> = {};
    for (const [name, query] of Object.entries(queries)) {
      for (let i = 0; i < 3; i++) await store.analytics(query);
      const samples: number[] = [];
      let rows = 0;
      for (let i = 0; i < 20; i++) {
        const t = performance.now();
        rows = (await store.analytics(query)).length;
        samples.push(performance.now() - t);
      }
      const { p50 } = summarise(samples);
      results[name] = { rows, p50_ms: round(p50, 2), max_ms: round(Math.max(...samples), 2) };
    }
    console.log(
      JSON.stringify({
        store: POSTGRES ? 'postgres' : 'sqlite',
        records: RECORDS,
        insert_records_per_s: Math.round(RECORDS / insertSeconds),
        queries: results,
        node: process.version,
      }),
    );
  } finally {
    await close();
  }
}

await main();
