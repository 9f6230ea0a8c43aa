/**
 * The semantic cache's entries (docs/cache.md): one row per stored answer, with the partition it may
 * answer in, the exact key of the request that stored it, its embedding (float32, base64) and the answer
 * as the simple cache serializes it. Nodes load a partition's rows into their in-process index; a hit
 * reads the answer by id. Logs gain the similarity of a semantic answer.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('semantic_cache_entries')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    // '' for requests without a cache namespace, so one equality finds either kind.
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('partition_key', 'text', (c) => c.notNull())
    .addColumn('exact_key', 'text', (c) => c.notNull())
    .addColumn('vector', 'text', (c) => c.notNull())
    .addColumn('answer', 'text', (c) => c.notNull())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('expires_at_ms', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('semantic_cache_partition')
    .on('semantic_cache_entries')
    .columns(['workspace_id', 'partition_key'])
    .execute();
  await db.schema
    .createIndex('semantic_cache_namespace')
    .on('semantic_cache_entries')
    .columns(['workspace_id', 'namespace'])
    .execute();
  await db.schema
    .createIndex('semantic_cache_expiry')
    .on('semantic_cache_entries')
    .column('expires_at_ms')
    .execute();
  await db.schema.alterTable('logs').addColumn('cache_similarity', 'double precision').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('logs').dropColumn('cache_similarity').execute();
  await db.schema.dropTable('semantic_cache_entries').ifExists().execute();
}
