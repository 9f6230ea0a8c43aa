/**
 * Analytics: sums of the log's rollups (store/rollups.ts), never of the log itself. A query reads one
 * period's rows (per minute or per hour) of its workspaces over a range, grouped by time bucket and one
 * dimension, so its cost grows with the number of buckets and groups, not with the number of records.
 */
import { sql, type Kysely } from 'kysely';
import { HISTOGRAM_COLUMNS, ROLLUP_SUM_COLUMNS } from '../rollups.js';
import { toNumber } from '../rows.js';
import type { Database } from '../schema.js';
import type { AnalyticsQuery, AnalyticsRow, LogRepository } from '../types.js';
import type { RepositoryContext } from './context.js';

export function createAnalyticsRepository({ db }: RepositoryContext): Pick<LogRepository, 'analytics'> {
  return { analytics: (query) => analytics(db, query) };
}

async function analytics(db: Kysely<Database>, query: AnalyticsQuery): Promise<AnalyticsRow[]> {
  if (query.workspace_ids.length === 0) return [];
  const metaKey =
    typeof query.group_by === 'object' ? query.group_by.metadata : (query.filters.metadata?.key ?? '');
  const bucket =
    query.interval_ms === undefined
      ? sql<number | null>`null`
      : sql<number>`bucket_ms - (bucket_ms % ${sql.lit(query.interval_ms)})`;
  const group =
    query.group_by === undefined
      ? sql<string | null>`null`
      : typeof query.group_by === 'object'
        ? sql<string>`meta_value`
        : sql<string>`${sql.ref(query.group_by)}`;

  let builder = db
    .selectFrom('log_rollups')
    .select([bucket.as('bucket'), group.as('grp')])
    .select(ROLLUP_SUM_COLUMNS.map((column) => sql<number>`sum(${sql.ref(column)})`.as(column)))
    .where('workspace_id', 'in', query.workspace_ids)
    .where('period', '=', query.period)
    .where('meta_key', '=', metaKey)
    .where('bucket_ms', '>=', query.from_ms)
    .where('bucket_ms', '<', query.to_ms);
  for (const [column, value] of Object.entries(query.filters)) {
    if (column === 'metadata' || value === undefined) continue;
    builder = builder.where(sql.ref(column), '=', value as string | number);
  }
  if (query.filters.metadata) builder = builder.where('meta_value', '=', query.filters.metadata.value);
  const rows = await builder
    .groupBy([sql`1`, sql`2`])
    .orderBy(sql`1`)
    .orderBy(sql`2`)
    .execute();

  return rows.map((row) => {
    const values = row as unknown as Record<string, unknown>;
    const grp = values.grp as string | number | null;
    return {
      bucket_ms: values.bucket === null ? null : toNumber(values.bucket as number),
      group: grp === null || grp === '' ? null : String(grp),
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
