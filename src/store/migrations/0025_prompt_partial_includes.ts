/**
 * Which partials each prompt version and each partial version includes, by the name its text uses
 * (`{{>house-style@2}}`: `house-style`): a change to a partial finds the prompt versions it reaches
 * through these, rather than by reading and rendering every prompt of the workspace. A version's rows are
 * written with it; `includes_indexed` says they were (versions stored before this, or by a node that does
 * not write them, are read once and recorded when a partial of their workspace next changes).
 */
import type { Kysely } from 'kysely';

const INDEXED = [
  { table: 'prompt_version_includes', versions: 'prompt_versions', owners: 'prompts', owner: 'prompt_id' },
  {
    table: 'prompt_partial_version_includes',
    versions: 'prompt_partial_versions',
    owners: 'prompt_partials',
    owner: 'partial_id',
  },
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const { table, versions, owners, owner } of INDEXED) {
    await db.schema
      .alterTable(versions)
      .addColumn('includes_indexed', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable(table)
      .addColumn(owner, 'text', (c) => c.notNull().references(`${owners}.id`).onDelete('cascade'))
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('partial', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint(`${table}_pkey`, [owner, 'version', 'partial'])
      .execute();
    await db.schema
      .createIndex(`${table}_workspace_partial_idx`)
      .on(table)
      .columns(['workspace_id', 'partial'])
      .execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const { table, versions } of INDEXED) {
    await db.schema.dropTable(table).ifExists().execute();
    await db.schema.alterTable(versions).dropColumn('includes_indexed').execute();
  }
}
