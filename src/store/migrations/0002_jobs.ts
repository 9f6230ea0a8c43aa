/**
 * Background jobs with leases: any node may claim a due job; a node that dies leaves a lease that
 * expires, and another node takes the job over. Same column types as 0001 for both dialects; times
 * in milliseconds (leases are short).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // No foreign key to workspaces: a job is bookkeeping of work, like a log record.
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('result', 'text')
    .addColumn('error', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('run_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at_ms', 'bigint')
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('finished_at_ms', 'bigint')
    .execute();
  // Claiming looks for due jobs of some kinds in one status; listing filters by kind and status.
  await db.schema
    .createIndex('jobs_kind_status_run_at_idx')
    .on('jobs')
    .columns(['kind', 'status', 'run_at_ms'])
    .execute();
  await db.schema.createIndex('jobs_workspace_idx').on('jobs').columns(['workspace_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('jobs').ifExists().execute();
}
