/**
 * Responses by status and last write: the background worker looks, every minute, for foreground responses
 * a stopped node left `in_progress` (docs/responses.md); without it, that look reads every response.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('responses_status_updated_idx')
    .on('responses')
    .columns(['status', 'updated_at_ms'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('responses_status_updated_idx').ifExists().execute();
}
