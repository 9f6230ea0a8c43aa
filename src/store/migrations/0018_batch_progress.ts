/**
 * A running batch's progress kept on its row: `completed` and `failed` count settled lines as they
 * settle (they were written only at finalization), the token columns sum their usage, `cost` sums the
 * cost of the priced lines and `unpriced` counts the others (a line's cost is kept on it too). Reading a
 * batch no longer scans its lines. Batches already running take their figures from their lines here;
 * their lines settled before have no cost, so they count as unpriced.
 */
import { sql, type Kysely } from 'kysely';

const TOKEN_COLUMNS = ['input_tokens', 'output_tokens', 'cached_tokens', 'reasoning_tokens'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of TOKEN_COLUMNS) {
    await db.schema
      .alterTable('batches')
      .addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
  }
  await db.schema
    .alterTable('batches')
    .addColumn('cost', 'double precision', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('batches')
    .addColumn('unpriced', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('batch_lines').addColumn('cost', 'double precision').execute();
  const lines = (state: string) =>
    sql`(select count(*) from batch_lines where batch_lines.batch_id = batches.id and batch_lines.state = ${state})`;
  const sum = (column: string) =>
    sql`(select coalesce(sum(${sql.ref(column)}), 0) from batch_lines where batch_lines.batch_id = batches.id)`;
  await sql`
    update batches set
      completed = ${lines('succeeded')},
      failed = ${lines('failed')},
      input_tokens = ${sum('input_tokens')},
      output_tokens = ${sum('output_tokens')},
      cached_tokens = ${sum('cached_tokens')},
      reasoning_tokens = ${sum('reasoning_tokens')},
      unpriced = (select count(*) from batch_lines
        where batch_lines.batch_id = batches.id and batch_lines.state in ('succeeded', 'failed'))
    where finalize_queued = 0 and status in ('validating', 'in_progress', 'cancelling')
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('batch_lines').dropColumn('cost').execute();
  for (const column of [...TOKEN_COLUMNS, 'cost', 'unpriced']) {
    await db.schema.alterTable('batches').dropColumn(column).execute();
  }
}
