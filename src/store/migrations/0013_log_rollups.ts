/**
 * Rollups of the log for analytics (store/rollups.ts): per minute, hour and day, per provider, model, API
 * key, prompt, status class and configured metadata key. Records already logged are rolled up here, once;
 * later ones as they are inserted.
 */
import { sql, type Kysely } from 'kysely';
import { HISTOGRAM_COLUMNS, LATENCY_BOUNDS_MS, PERIOD_MS, ROLLUP_KEY_COLUMNS } from '../rollups.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  let table = db.schema
    .createTable('log_rollups')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('bucket_ms', 'bigint', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('prompt_id', 'text', (c) => c.notNull())
    .addColumn('status_class', 'integer', (c) => c.notNull())
    .addColumn('meta_key', 'text', (c) => c.notNull())
    .addColumn('meta_value', 'text', (c) => c.notNull())
    .addColumn('requests', 'bigint', (c) => c.notNull())
    .addColumn('errors', 'bigint', (c) => c.notNull())
    .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
    .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
    .addColumn('cost', 'double precision', (c) => c.notNull())
    .addColumn('priced', 'bigint', (c) => c.notNull())
    .addColumn('latency_ms_sum', 'double precision', (c) => c.notNull());
  for (const column of HISTOGRAM_COLUMNS) table = table.addColumn(column, 'bigint', (c) => c.notNull());
  await table.addPrimaryKeyConstraint('log_rollups_pk', [...ROLLUP_KEY_COLUMNS]).execute();
  // Analytics read one workspace's rows of one period over a time range.
  await db.schema
    .createIndex('log_rollups_range')
    .on('log_rollups')
    .columns(['workspace_id', 'period', 'meta_key', 'bucket_ms'])
    .execute();

  for (const [period, ms] of Object.entries(PERIOD_MS)) {
    const bucket = sql`created_at_ms - (created_at_ms % ${sql.lit(ms)})`;
    const histogram = HISTOGRAM_COLUMNS.map((_, index) => {
      const low = index === 0 ? undefined : LATENCY_BOUNDS_MS[index - 1];
      const high = LATENCY_BOUNDS_MS[index];
      const conditions = [
        low === undefined ? undefined : sql`latency_ms > ${sql.lit(low)}`,
        high === undefined ? undefined : sql`latency_ms <= ${sql.lit(high)}`,
      ].filter((condition) => condition !== undefined);
      return sql`sum(case when ${sql.join(conditions, sql` and `)} then 1 else 0 end)`;
    });
    await sql`
      insert into log_rollups
      select workspace_id, ${sql.lit(period)}, ${bucket}, coalesce(provider, ''), coalesce(model, ''),
        coalesce(api_key_id, ''), coalesce(prompt_id, ''), status / 100, '', '',
        count(*), sum(case when status >= 400 then 1 else 0 end), coalesce(sum(prompt_tokens), 0),
        coalesce(sum(completion_tokens), 0), coalesce(sum(cost), 0), count(cost), sum(latency_ms),
        ${sql.join(histogram)}
      from logs
      where is_attempt = 0 and workspace_id is not null
      group by workspace_id, ${bucket}, coalesce(provider, ''), coalesce(model, ''), coalesce(api_key_id, ''),
        coalesce(prompt_id, ''), status / 100
    `.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('log_rollups').ifExists().execute();
}
