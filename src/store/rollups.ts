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

/**
 * Characters of a model name a rollup keeps. The model is part of a rollup row's key, and PostgreSQL's
 * index entries end at 2,704 bytes: a caller's made-up model of a few thousand characters failed the insert
 * of its whole batch of records, again at every retry, and no record was written after it.
 */
export const MAX_ROLLUP_MODEL = 256;

/** The model as its rollup rows hold it, and as analytics filters on it: at most MAX_ROLLUP_MODEL long. */
export function rollupModel(model: string): string {
  if (model.length <= MAX_ROLLUP_MODEL) return model;
  const end = model.charCodeAt(MAX_ROLLUP_MODEL - 1);
  // Never half of a surrogate pair.
  return model.slice(0, end >= 0xd800 && end <= 0xdbff ? MAX_ROLLUP_MODEL - 1 : MAX_ROLLUP_MODEL);
}

export function latencyBucket(latencyMs: number): number {
  for (let i = 0; i < LATENCY_BOUNDS_MS.length; i++) if (latencyMs <= LATENCY_BOUNDS_MS[i]) return i;
  return LATENCY_BOUNDS_MS.length;
}

const SUMS_AT = ROLLUP_KEY_COLUMNS.length;

/**
 * The rollup rows of a batch of records, summed per key, as values in ROLLUP_COLUMNS order, sorted by key
 * (concurrent writers then lock rows in one order).
 *
 * This runs for every request record: a record's dimensions are serialised once (JSON escapes control
 * characters, so the NUL separators of the sort keys cannot occur inside a part), and its rows are found
 * by that text and each period's bucket, with no key made per record. A row is built, and its sort key
 * made, only the first time the batch meets it.
 */
export function rollupValues(records: readonly LogRecord[], metadataKeys: readonly string[]): unknown[][] {
  const rows = new BatchRows();
  const batchDims = new BatchDims();
  for (const record of records) {
    if (record.is_attempt || record.workspace_id === null) continue;
    const { dims, dimsKey } = batchDims.of(record);
    for (const period of ROLLUP_PERIODS) {
      const bucket = record.created_at_ms - (record.created_at_ms % PERIOD_MS[period]);
      addRecord(rows.of(period, bucket, dimsKey, dims, '', ''), record);
      for (const key of metadataKeys) {
        const value = record.metadata?.[key];
        if (typeof value !== 'string' || value.length > MAX_META_VALUE) continue;
        addRecord(
          rows.of(period, bucket, `${dimsKey}\u0000${JSON.stringify([key, value])}`, dims, key, value),
          record,
        );
      }
    }
  }
  return rows.sorted();
}

type RecordDims = readonly [string, string, string, string, string, number];

/** A batch's dimensions, each made and serialised the first time the batch meets it, and found by the
 * record's values (level by level) the other times, with nothing made per record. */
class BatchDims {
  private readonly root = new Map<string | number, unknown>();

  of(record: LogRecord): { dims: RecordDims; dimsKey: string } {
    const workspace = record.workspace_id!;
    const provider = record.provider ?? '';
    const model = record.model ?? '';
    const apiKey = record.api_key_id ?? '';
    const prompt = record.prompt_id ?? '';
    const statusClass = Math.floor(record.status / 100);
    const byModel = level(level(this.root, workspace), provider);
    const byPrompt = level(level(byModel, model), apiKey);
    const byStatus = level(byPrompt, prompt);
    let found = byStatus.get(statusClass) as { dims: RecordDims; dimsKey: string } | undefined;
    if (found === undefined) {
      const dims = [workspace, provider, rollupModel(model), apiKey, prompt, statusClass] as const;
      found = { dims, dimsKey: JSON.stringify(dims) };
      byStatus.set(statusClass, found);
    }
    return found;
  }
}

/** The map under `value` in `map`, made the first time. */
function level(map: Map<string | number, unknown>, value: string): Map<string | number, unknown> {
  let next = map.get(value) as Map<string | number, unknown> | undefined;
  if (next === undefined) map.set(value, (next = new Map()));
  return next;
}

/** A batch's rows by period, bucket and dimensions (with a metadata pair, if any). */
class BatchRows {
  private readonly byPeriod = new Map<RollupPeriod, Map<number, Map<string, number[]>>>();
  /** Each row with its sort key: period, bucket, dimensions, NUL-separated. */
  private readonly all: Array<{ key: string; row: number[] }> = [];

  /** The row of the key, made with zero sums the first time the batch meets it. */
  of(
    period: RollupPeriod,
    bucket: number,
    dimsKey: string,
    dims: RecordDims,
    metaKey: string,
    metaValue: string,
  ): number[] {
    let byBucket = this.byPeriod.get(period);
    if (byBucket === undefined) this.byPeriod.set(period, (byBucket = new Map()));
    let byDims = byBucket.get(bucket);
    if (byDims === undefined) byBucket.set(bucket, (byDims = new Map()));
    let row = byDims.get(dimsKey);
    if (row === undefined) {
      row = newRow(dims, period, bucket, metaKey, metaValue);
      byDims.set(dimsKey, row);
      this.all.push({ key: `${period}\u0000${bucket}\u0000${dimsKey}`, row });
    }
    return row;
  }

  sorted(): number[][] {
    return this.all.sort(({ key: a }, { key: b }) => (a < b ? -1 : a > b ? 1 : 0)).map(({ row }) => row);
  }
}

/** A row with zero sums: key columns (text and numbers) first, in ROLLUP_KEY_COLUMNS order; only the sums
 * after them are added to. */
function newRow(
  dims: RecordDims,
  period: RollupPeriod,
  bucket: number,
  metaKey: string,
  metaValue: string,
): number[] {
  const [workspace, provider, model, apiKey, prompt, statusClass] = dims;
  const values: unknown[] = [
    workspace,
    period,
    bucket,
    provider,
    model,
    apiKey,
    prompt,
    statusClass,
    metaKey,
    metaValue,
  ];
  for (let i = 0; i < ROLLUP_SUM_COLUMNS.length; i++) values.push(0);
  return values as number[];
}

/** Adds a record to a row's sums. */
function addRecord(sums: number[], record: LogRecord): void {
  sums[SUMS_AT] += 1;
  sums[SUMS_AT + 1] += record.status >= 400 ? 1 : 0;
  sums[SUMS_AT + 2] += record.prompt_tokens ?? 0;
  sums[SUMS_AT + 3] += record.completion_tokens ?? 0;
  sums[SUMS_AT + 4] += record.cost ?? 0;
  sums[SUMS_AT + 5] += record.cost === null ? 0 : 1;
  sums[SUMS_AT + 6] += record.latency_ms;
  sums[SUMS_AT + 7 + latencyBucket(record.latency_ms)] += 1;
}

/** `INSERT … ON CONFLICT DO UPDATE` adding a row's sums to the stored ones; the same text on SQLite and
 * PostgreSQL. */
export const ROLLUP_UPSERT_SQL =
  `INSERT INTO log_rollups (${ROLLUP_COLUMNS.map((c) => `"${c}"`).join(', ')}) ` +
  `VALUES (${ROLLUP_COLUMNS.map(() => '?').join(', ')}) ` +
  `ON CONFLICT (${ROLLUP_KEY_COLUMNS.map((c) => `"${c}"`).join(', ')}) DO UPDATE SET ` +
  ROLLUP_SUM_COLUMNS.map((c) => `"${c}" = log_rollups."${c}" + excluded."${c}"`).join(', ');
