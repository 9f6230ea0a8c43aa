/**
 * Files are listed by creation time, then id: a batch's output and error files have ids made from the
 * batch's (so that finishing it twice names them the same), which do not sort by when they were created.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('files_workspace_created_idx')
    .on('files')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('files_workspace_created_idx').execute();
}
