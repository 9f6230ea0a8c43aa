/**
 * Workspaces may be deleted (`DELETE /v1/workspaces/{id}`): `workspaces.deleted_at` (Unix seconds; null:
 * live). A deleted workspace's row is kept, as logs name it, under a slug no live workspace can take, so
 * that its own slug may be used again.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('workspaces').addColumn('deleted_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('workspaces').dropColumn('deleted_at').execute();
}
