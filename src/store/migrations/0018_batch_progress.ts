/**
 * A running batch's progress kept on its row: `completed` and `failed` count settled lines as they
 * settle (they were written only at finalization), and the token columns sum their usage. Reading a
 * batch no longer scans its lines. Batches already running take their figures from their lines here.
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
      reasoning_tokens = ${sum('reasoning_tokens')}
    where finalize_queued = 0 and status in ('validating', 'in_progress', 'cancelling')
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of TOKEN_COLUMNS) await db.schema.alterTable('batches').dropColumn(column).execute();
}
