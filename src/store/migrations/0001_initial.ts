/**
 * The first schema. Written once for both dialects: only column types and index forms that SQLite
 * and PostgreSQL read the same way (text, integer, bigint, double precision, partial indexes).
 * Never edit a migration that has shipped; add the next one instead.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('organisations')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('organisation_id', 'text', (c) =>
      c.notNull().references('organisations.id').onDelete('cascade'),
    )
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('workspaces_organisation_slug_key', ['organisation_id', 'slug'])
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('organisation_id', 'text', (c) =>
      c.notNull().references('organisations.id').onDelete('cascade'),
    )
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .addColumn('metadata', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('api_keys_key_hash_key').unique().on('api_keys').column('key_hash').execute();
  await db.schema
    .createIndex('api_keys_workspace_idx')
    .on('api_keys')
    .columns(['workspace_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('credentials')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('organisation_id', 'text', (c) =>
      c.notNull().references('organisations.id').onDelete('cascade'),
    )
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('secret_encrypted', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .execute();
  // Deleted rows are kept (logs may name them) but must not block reusing their slug.
  await db.schema
    .createIndex('credentials_workspace_kind_slug_key')
    .unique()
    .on('credentials')
    .columns(['workspace_id', 'kind', 'slug'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();

  await db.schema
    .createTable('configs')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('organisation_id', 'text', (c) =>
      c.notNull().references('organisations.id').onDelete('cascade'),
    )
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('configs_workspace_slug_key')
    .unique()
    .on('configs')
    .columns(['workspace_id', 'slug'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();

  await db.schema
    .createTable('config_versions')
    .addColumn('config_id', 'text', (c) => c.notNull().references('configs.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('config_versions_pkey', ['config_id', 'version'])
    .execute();

  // No foreign keys on logs: they are written in bulk on the hot path's behalf and outlive the keys,
  // workspaces and credentials they mention.
  await db.schema
    .createTable('logs')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('organisation_id', 'text')
    .addColumn('workspace_id', 'text')
    .addColumn('api_key_id', 'text')
    .addColumn('trace_id', 'text', (c) => c.notNull())
    .addColumn('span_id', 'text', (c) => c.notNull())
    .addColumn('parent_span_id', 'text')
    .addColumn('span_name', 'text')
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('provider', 'text')
    .addColumn('model', 'text')
    .addColumn('target', 'text')
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('is_attempt', 'integer', (c) => c.notNull())
    .addColumn('stream', 'integer', (c) => c.notNull())
    .addColumn('latency_ms', 'double precision', (c) => c.notNull())
    .addColumn('ttfb_ms', 'double precision')
    .addColumn('prompt_tokens', 'bigint')
    .addColumn('completion_tokens', 'bigint')
    .addColumn('total_tokens', 'bigint')
    .addColumn('cached_tokens', 'bigint')
    .addColumn('reasoning_tokens', 'bigint')
    .addColumn('cache_status', 'text')
    .addColumn('retry_count', 'integer', (c) => c.notNull())
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('request_body', 'text')
    .addColumn('response_body', 'text')
    .execute();
  // Listing is newest first with `id` breaking ties, so the index carries both in that order.
  await db.schema
    .createIndex('logs_workspace_created_idx')
    .on('logs')
    .columns(['workspace_id', 'created_at_ms desc', 'id desc'])
    .execute();
  await db.schema.createIndex('logs_trace_idx').on('logs').column('trace_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'logs',
    'config_versions',
    'configs',
    'credentials',
    'api_keys',
    'workspaces',
    'organisations',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
