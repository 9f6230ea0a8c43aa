/**
 * Which stored documents each config version and each prompt version names, by kind and by the name it
 * uses (`guardrail:no-pii`, `prompt:support-answer`, `virtual_key:openai-prod`, `provider:anthropic-prod`,
 * `config:support-fallback`): deleting (or archiving) one finds the configs and prompt versions naming it
 * through these, rather than by reading every config and prompt version of the workspace. As with 0025,
 * a version's rows are written with it and `references_indexed` says they were; versions stored before
 * this are read once and recorded when something of their workspace is next deleted.
 */
import type { Kysely } from 'kysely';

const INDEXED = [
  { table: 'config_version_references', versions: 'config_versions', owners: 'configs', owner: 'config_id' },
  { table: 'prompt_version_references', versions: 'prompt_versions', owners: 'prompts', owner: 'prompt_id' },
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const { table, versions, owners, owner } of INDEXED) {
    await db.schema
      .alterTable(versions)
      .addColumn('references_indexed', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable(table)
      .addColumn(owner, 'text', (c) => c.notNull().references(`${owners}.id`).onDelete('cascade'))
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint(`${table}_pkey`, [owner, 'version', 'name'])
      .execute();
    await db.schema
      .createIndex(`${table}_workspace_name_idx`)
      .on(table)
      .columns(['workspace_id', 'name'])
      .execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const { table, versions } of INDEXED) {
    await db.schema.dropTable(table).ifExists().execute();
    await db.schema.alterTable(versions).dropColumn('references_indexed').execute();
  }
}
