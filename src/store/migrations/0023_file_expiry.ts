/**
 * Files may expire: `files.expires_at` (Unix seconds; null: kept until deleted), set on a batch's output
 * and error files from the batch's `output_expires_after` (its seconds kept on the batch's row).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('files').addColumn('expires_at', 'bigint').execute();
  await db.schema.createIndex('files_expires_at_idx').on('files').column('expires_at').execute();
  await db.schema.alterTable('batches').addColumn('output_expires_after', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('batches').dropColumn('output_expires_after').execute();
  await db.schema.dropIndex('files_expires_at_idx').execute();
  await db.schema.alterTable('files').dropColumn('expires_at').execute();
}
