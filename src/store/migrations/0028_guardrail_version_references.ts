/**
 * Which stored documents each guardrail version names, as 0026 records them for config and prompt
 * versions: the stored config or virtual key its model-judged checks ask their judge through
 * (`config:route-a`, `virtual_key:openai-judge`). Deleting or archiving one finds the guardrails judging
 * through it by these, rather than by reading every guardrail of the workspace. A version's rows are
 * written with it and `references_indexed` says they were; versions stored before this are read once and
 * recorded when something of their workspace is next deleted.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('guardrail_versions')
    .addColumn('references_indexed', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('guardrail_version_references')
    .addColumn('guardrail_id', 'text', (c) => c.notNull().references('guardrails.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('guardrail_version_references_pkey', ['guardrail_id', 'version', 'name'])
    .execute();
  await db.schema
    .createIndex('guardrail_version_references_workspace_name_idx')
    .on('guardrail_version_references')
    .columns(['workspace_id', 'name'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('guardrail_version_references').ifExists().execute();
  await db.schema.alterTable('guardrail_versions').dropColumn('references_indexed').execute();
}
