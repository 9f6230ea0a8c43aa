/**
 * Rollups of the log for analytics: every request record is also added, in the same transaction, to
 * per-minute, per-hour and per-day (UTC) rows keyed by what analytics group and filter on (provider, model, API key,
 * prompt, status class; and one row per configured metadata key). A row holds sums — requests, errors,
 * tokens, cost, latency — and a latency histogram, so analytics over millions of records read thousands of
 * rows, never the log itself. Attempt records are not rolled up: their request's record counts the call.
 */
import type { LogRecord } from './types.js';

export type RollupPeriod = 'minute' | 'hour' | 'day';

const ROLLUP_PERIODS = ['minute', 'hour', 'day'] as const;

export const PERIOD_MS: Readonly<Record<RollupPeriod, number>> = {
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};

/**
 * Upper bounds (ms) of the latency histogram's buckets; the last bucket has none. Percentiles are read from
 * it by interpolating inside the bucket the rank falls in (docs/observability.md, "Analytics").
 */
export const LATENCY_BOUNDS_MS = [
  5, 10, 25, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1_000, 1_500, 2_000, 3_000, 5_000, 7_500, 10_000,
  15_000, 20_000, 30_000, 60_000, 120_000,
] as const;

export const HISTOGRAM_COLUMNS = [...LATENCY_BOUNDS_MS, Infinity].map(
  (_, index) => `h${String(index).padStart(2, '0')}`,
) as readonly string[];

/** The key of a rollup row. Text columns hold '' for "none" so the key can be a primary key. */
export const ROLLUP_KEY_COLUMNS = [
  'workspace_id',
  'period',
  'bucket_ms',
  'provider',
  'model',
  'api_key_id',
  'prompt_id',
  'status_class',
  'meta_key',
  'meta_value',
] as const;

export const ROLLUP_SUM_COLUMNS = [
  'requests',
  'errors',
  'prompt_tokens',
  'completion_tokens',
  'cost',
  'priced',
  'latency_ms_sum',
  ...HISTOGRAM_COLUMNS,
] as const;

export const ROLLUP_COLUMNS = [...ROLLUP_KEY_COLUMNS, ...ROLLUP_SUM_COLUMNS];

/** Metadata values longer than this are not rolled up (they are identifiers of one call, not groups). */
const MAX_META_VALUE = 128;

export function latencyBucket(latencyMs: number): number {
  for (let i = 0; i < LATENCY_BOUNDS_MS.length; i++) if (latencyMs <= LATENCY_BOUNDS_MS[i]) return i;
  return LATENCY_BOUNDS_MS.length;
}

/** The rollup rows of a batch of records, summed per key, as values in ROLLUP_COLUMNS order, sorted by key
 * (concurrent writers then lock rows in one order). */
export function rollupValues(records: readonly LogRecord[], metadataKeys: readonly string[]): unknown[][] {
  const rows = new Map<string, unknown[]>();
  const sumsAt = ROLLUP_KEY_COLUMNS.length;
  const add = (key: unknown[], record: LogRecord) => {
    const id = JSON.stringify(key);
    let row = rows.get(id);
    if (!row) {
      row = [...key, ...ROLLUP_SUM_COLUMNS.map(() => 0)];
      rows.set(id, row);
    }
    const sums = row as number[];
    sums[sumsAt] += 1;
    sums[sumsAt + 1] += record.status >= 400 ? 1 : 0;
    sums[sumsAt + 2] += record.prompt_tokens ?? 0;
    sums[sumsAt + 3] += record.completion_tokens ?? 0;
    sums[sumsAt + 4] += record.cost ?? 0;
    sums[sumsAt + 5] += record.cost === null ? 0 : 1;
    sums[sumsAt + 6] += record.latency_ms;
    sums[sumsAt + 7 + latencyBucket(record.latency_ms)] += 1;
  };
  for (const record of records) {
    if (record.is_attempt || record.workspace_id === null) continue;
    for (const period of ROLLUP_PERIODS) {
      const bucket = record.created_at_ms - (record.created_at_ms % PERIOD_MS[period]);
      const dims = [
        record.workspace_id,
        period,
        bucket,
        record.provider ?? '',
        record.model ?? '',
        record.api_key_id ?? '',
        record.prompt_id ?? '',
        Math.floor(record.status / 100),
      ];
      add([...dims, '', ''], record);
      for (const key of metadataKeys) {
        const value = record.metadata?.[key];
        if (typeof value === 'string' && value.length <= MAX_META_VALUE) add([...dims, key, value], record);
      }
    }
  }
  return [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}

/** `INSERT … ON CONFLICT DO UPDATE` adding a row's sums to the stored ones; the same text on SQLite and
 * PostgreSQL. */
export const ROLLUP_UPSERT_SQL =
  `INSERT INTO log_rollups (${ROLLUP_COLUMNS.map((c) => `"${c}"`).join(', ')}) ` +
  `VALUES (${ROLLUP_COLUMNS.map(() => '?').join(', ')}) ` +
  `ON CONFLICT (${ROLLUP_KEY_COLUMNS.map((c) => `"${c}"`).join(', ')}) DO UPDATE SET ` +
  ROLLUP_SUM_COLUMNS.map((c) => `"${c}" = log_rollups."${c}" + excluded."${c}"`).join(', ');
