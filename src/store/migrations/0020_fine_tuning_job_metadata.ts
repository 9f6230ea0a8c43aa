/**
 * A fine-tuning job's metadata as the client gave it (JSON text, null for none), so that the job list can
 * be filtered by it (`metadata[k]=v`) in the store, whatever the provider's job object echoes. Jobs made
 * before take it from their provider object as last seen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('fine_tuning_jobs').addColumn('metadata', 'text').execute();
  const { rows } = await sql<{ id: string; object: string }>`select id, object from fine_tuning_jobs`.execute(
    db,
  );
  for (const row of rows) {
    const metadata = (JSON.parse(row.object) as { metadata?: unknown }).metadata;
    if (!metadata || typeof metadata !== 'object' || Object.keys(metadata).length === 0) continue;
    await sql`update fine_tuning_jobs set metadata = ${JSON.stringify(metadata)} where id = ${row.id}`.execute(
      db,
    );
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('fine_tuning_jobs').dropColumn('metadata').execute();
}
