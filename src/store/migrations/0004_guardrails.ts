/**
 * Stored guardrails and their versions, laid out like configs (0001): a partial unique index keeps
 * slugs unique among live rows, so a deleted guardrail (kept: logs may name it) frees its slug.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('guardrails')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('organisation_id', 'text', (c) =>
      c.notNull().references('organisations.id').onDelete('cascade'),
    )
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('guardrail', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('guardrails_workspace_slug_key')
    .unique()
    .on('guardrails')
    .columns(['workspace_id', 'slug'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();

  await db.schema
    .createTable('guardrail_versions')
    .addColumn('guardrail_id', 'text', (c) => c.notNull().references('guardrails.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('guardrail', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('guardrail_versions_pkey', ['guardrail_id', 'version'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('guardrail_versions').ifExists().execute();
  await db.schema.dropTable('guardrails').ifExists().execute();
}
