/**
 * A log record keeps its call's hook results and feedback (`{before_request_hooks, after_request_hooks}`,
 * JSON text like the bodies): in a column of their own rather than inside the response body, so they are
 * kept when body logging is off and read without parsing a body.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('logs').addColumn('hook_results', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('logs').dropColumn('hook_results').execute();
}
