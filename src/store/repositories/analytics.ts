/**
 * Analytics: sums of the log's rollups (store/rollups.ts), never of the log itself. A query reads one
 * period's rows (per minute or per hour, and per day for a summary's whole days) of its workspaces over a
 * range, grouped by time bucket and one dimension, so its cost grows with the number of buckets and groups,
 * not with the number of records. The groups of an answer are bounded in the query itself: those past the
 * limit are summed into one row per bucket, so the database returns at most buckets × (limit + 1) rows.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { AbortSignalLike } from '../../core/abort.js';
import { GatewayError } from '../../core/errors.js';
import { HISTOGRAM_COLUMNS, ROLLUP_SUM_COLUMNS, type RollupPeriod } from '../rollups.js';
import { toNumber } from '../rows.js';
import type { Database } from '../schema.js';
import { STOP_POINT, type SqliteLogReader } from '../sqlite-log-reader.js';
import type { AnalyticsQuery, AnalyticsRow, LogRepository, StoreKind } from '../types.js';
import type { RepositoryContext } from './context.js';
import { boundedPostgresRead } from './postgres-read.js';

export function createAnalyticsRepository({
  db,
  kind,
  logReaders,
  readTimeoutMs,
}: RepositoryContext): Pick<LogRepository, 'analytics'> {
  return {
    analytics: (query, options) =>
      analytics(
        db,
        kind,
        query,
        { reader: logReaders?.analytics, timeoutMs: readTimeoutMs },
        options?.signal,
      ),
  };
}

interface Span {
  period: RollupPeriod;
  from_ms: number;
  to_ms: number;
}

/** The rows read: the query's period over its range, but its whole days from the daily rows. */
function spansOf(query: AnalyticsQuery): Span[] {
  const days = query.whole_days;
  const spans: Span[] = days
    ? [
        { period: query.period, from_ms: query.from_ms, to_ms: days.from_ms },
        { period: 'day', from_ms: days.from_ms, to_ms: days.to_ms },
        { period: query.period, from_ms: days.to_ms, to_ms: query.to_ms },
      ]
    : [{ period: query.period, from_ms: query.from_ms, to_ms: query.to_ms }];
  return spans.filter((span) => span.from_ms < span.to_ms);
}

const SUMS = ROLLUP_SUM_COLUMNS.map((column) => sql.ref(column));

function sumsOf(table: string): RawBuilder<unknown> {
  return sql.join(
    ROLLUP_SUM_COLUMNS.map((column) => sql`sum(${sql.ref(`${table}.${column}`)}) as ${sql.ref(column)}`),
  );
}

/**
 * The statement of a query: rows of (bucket, grp, other, sums…), in bucket, then group order. On a SQLite
 * reader (`stoppable`) each rollup row read first calls its stop point, and each summed, so a read stopped
 * (its client gone, its bound passed) ends there instead of summing on to the end (sqlite-log-reader.ts,
 * sqlite-connection-reader.ts).
 */
export function analyticsSql(query: AnalyticsQuery, stoppable: boolean): RawBuilder<unknown> {
  const metaKey =
    typeof query.group_by === 'object' ? query.group_by.metadata : (query.filters.metadata?.key ?? '');
  const bucket =
    query.interval_ms === undefined
      ? sql`null`
      : sql`bucket_ms - (bucket_ms % ${sql.lit(query.interval_ms)})`;
  const group =
    query.group_by === undefined
      ? sql`null`
      : typeof query.group_by === 'object'
        ? sql`meta_value`
        : sql.ref(query.group_by);
  const conditions = [sql`workspace_id in (${sql.join(query.workspace_ids)})`, sql`meta_key = ${metaKey}`];
  if (stoppable) conditions.unshift(sql`${sql.raw(STOP_POINT)}()`);
  for (const [column, value] of Object.entries(query.filters)) {
    if (column === 'metadata' || value === undefined) continue;
    conditions.push(sql`${sql.ref(column)} = ${value as string | number}`);
  }
  if (query.filters.metadata) conditions.push(sql`meta_value = ${query.filters.metadata.value}`);

  // One select per span, each on the (workspace, period, meta_key, bucket) index.
  const rows = sql.join(
    spansOf(query).map(
      (span) =>
        sql`select ${bucket} as bucket, ${group} as grp, ${sql.join(SUMS)} from log_rollups
          where ${sql.join(conditions, sql` and `)} and period = ${span.period}
          and bucket_ms >= ${span.from_ms} and bucket_ms < ${span.to_ms}`,
    ),
    sql` union all `,
  );
  // A GROUP BY sorts the rows read, then sums them in order: a stop point for each row summed too (an
  // aggregate, true for every group), or the summing, a fifth of the query, ran on once stopped. Only the
  // sorting itself, in SQLite's C code, has none (about 50 ms for 300,000 rows).
  const summed = stoppable ? sql` having min(${sql.raw(STOP_POINT)}())` : sql``;
  if (query.group_by === undefined || query.group_limit === undefined) {
    return sql`select bucket, grp, 0 as other, ${sumsOf('r')} from (${rows}) as r
      group by bucket, grp${summed} order by bucket, grp`;
  }
  // The groups of the most requests over the whole range (ties by value), so a timeseries keeps the same ones
  // in every bucket; the rest are summed per bucket in one row, whose group is null. Both sums read the
  // rollup rows themselves: summing them per bucket and group first, then again, took three times as long
  // for an hourly series of many groups.
  return sql`with r as (${rows}),
    kept as (select grp from r group by grp${summed}
      order by sum(requests) desc, grp limit ${sql.lit(query.group_limit)})
    select r.bucket as bucket, kept.grp as grp, case when kept.grp is null then 1 else 0 end as other,
      ${sumsOf('r')}
    from r left join kept on kept.grp = r.grp
    group by 1, 2, 3${summed}
    order by 1, 3, 2`;
}

async function analytics(
  db: Kysely<Database>,
  kind: StoreKind,
  query: AnalyticsQuery,
  { reader, timeoutMs }: { reader: SqliteLogReader | undefined; timeoutMs: number },
  signal: AbortSignalLike | undefined,
): Promise<AnalyticsRow[]> {
  if (query.workspace_ids.length === 0 || query.from_ms >= query.to_ms) return [];
  const compiled = analyticsSql(query, reader !== undefined).compile(db);
  const read = async (): Promise<Record<string, unknown>[]> => {
    // Off the event loop, or bounded on it without WAL: a range of many groups sums hundreds of thousands
    // of rows.
    if (reader) return reader.all<Record<string, unknown>>(compiled.sql, compiled.parameters, { signal });
    // Under the same bound, as a statement timeout: the server stops the sums there.
    if (kind === 'postgres') return boundedPostgresRead<Record<string, unknown>>(db, compiled, timeoutMs);
    return (await db.executeQuery(compiled)).rows as Record<string, unknown>[];
  };
  const rows = await read().catch((error: unknown) => {
    throw analyticsError(error);
  });

  return rows.map((values) => {
    const grp = values.grp as string | number | null;
    return {
      bucket_ms: values.bucket === null ? null : toNumber(values.bucket as number),
      group: grp === null || grp === '' ? null : String(grp),
      other: toNumber(values.other as number) === 1,
      requests: toNumber(values.requests as number),
      errors: toNumber(values.errors as number),
      prompt_tokens: toNumber(values.prompt_tokens as number),
      completion_tokens: toNumber(values.completion_tokens as number),
      cost: Number(values.cost),
      priced: toNumber(values.priced as number),
      latency_ms_sum: Number(values.latency_ms_sum),
      histogram: HISTOGRAM_COLUMNS.map((column) => toNumber(values[column] as number)),
    };
  });
}

/** The readers' refusals speak of logs queries: told of analytics here, with their status kept. */
function analyticsError(error: unknown): unknown {
  if (!(error instanceof GatewayError)) return error;
  if (error.code === 'request_timeout') {
    return new GatewayError(
      'request_timeout',
      'The analytics query was unanswered in time and was stopped: narrow it with from and to, filters or a smaller limit',
      { cause: error },
    );
  }
  if (error.code === 'rate_limited') {
    return new GatewayError(
      'rate_limited',
      'Too many analytics queries are waiting: send the request again shortly',
      { headers: error.headers, cause: error },
    );
  }
  return error;
}
