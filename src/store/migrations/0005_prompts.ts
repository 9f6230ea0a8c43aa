/**
 * Stored prompts and prompt partials with their versions, laid out like configs and guardrails (0001,
 * 0004) plus the published version; and the log columns that say which prompt, at which version, a
 * prompt completion ran. Partial unique indexes keep slugs unique among live rows.
 */
import { sql, type Kysely } from 'kysely';

async function versionedTables(
  db: Kysely<unknown>,
  table: string,
  versionsTable: string,
  documentColumn: string,
  ownerColumn: string,
): Promise<void> {
  await db.schema
    .createTable(table)
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('organisation_id', 'text', (c) =>
      c.notNull().references('organisations.id').onDelete('cascade'),
    )
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn(documentColumn, 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('published_version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema
    .createIndex(`${table}_workspace_slug_key`)
    .unique()
    .on(table)
    .columns(['workspace_id', 'slug'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  await db.schema
    .createTable(versionsTable)
    .addColumn(ownerColumn, 'text', (c) => c.notNull().references(`${table}.id`).onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn(documentColumn, 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint(`${versionsTable}_pkey`, [ownerColumn, 'version'])
    .execute();
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await versionedTables(db, 'prompts', 'prompt_versions', 'prompt', 'prompt_id');
  await versionedTables(db, 'prompt_partials', 'prompt_partial_versions', 'partial', 'partial_id');
  await db.schema.alterTable('logs').addColumn('prompt_id', 'text').execute();
  await db.schema.alterTable('logs').addColumn('prompt_version', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('logs').dropColumn('prompt_version').execute();
  await db.schema.alterTable('logs').dropColumn('prompt_id').execute();
  await db.schema.dropTable('prompt_partial_versions').ifExists().execute();
  await db.schema.dropTable('prompt_partials').ifExists().execute();
  await db.schema.dropTable('prompt_versions').ifExists().execute();
  await db.schema.dropTable('prompts').ifExists().execute();
}
