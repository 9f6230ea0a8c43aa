/**
 * Log retention deletes the oldest records in batches (observability/log-retention.ts): an index on the
 * creation time alone finds them without reading the rest of the table.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('logs_created_idx').on('logs').column('created_at_ms').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('logs_created_idx').execute();
}
