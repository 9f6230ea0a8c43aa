/**
 * Files and managed batches. A file row describes a blob (`BlobStore` key `files/<id>`); a batch row holds
 * the batch's state, its timestamps and (encrypted) the request headers its lines run under; one
 * `batch_lines` row per input line holds the line's request and, once answered, its output line, so a
 * line's result is committed before it counts as done and output files are assembled from committed
 * results. Lines are leased like jobs: several nodes share one batch, and a dead node's lines go back
 * to the others when their lease runs out.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('files')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('line_count', 'integer')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('files_workspace_idx').on('files').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('batches')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('input_file_id', 'text', (c) => c.notNull())
    .addColumn('completion_window', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text')
    .addColumn('errors', 'text')
    .addColumn('output_file_id', 'text')
    .addColumn('error_file_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('in_progress_at', 'bigint')
    .addColumn('expires_at', 'bigint')
    .addColumn('finalizing_at', 'bigint')
    .addColumn('completed_at', 'bigint')
    .addColumn('failed_at', 'bigint')
    .addColumn('expired_at', 'bigint')
    .addColumn('cancelling_at', 'bigint')
    .addColumn('cancelled_at', 'bigint')
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('completed', 'integer', (c) => c.notNull())
    .addColumn('failed', 'integer', (c) => c.notNull())
    .addColumn('usage', 'text')
    .addColumn('concurrency', 'integer')
    .addColumn('call_encrypted', 'text', (c) => c.notNull())
    // Set once, by whoever queues the finalization: a batch is finalized exactly once.
    .addColumn('finalize_queued', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('batches_workspace_idx')
    .on('batches')
    .columns(['workspace_id', 'id'])
    .execute();
  await db.schema.createIndex('batches_status_idx').on('batches').columns(['status']).execute();

  await db.schema
    .createTable('batch_lines')
    .addColumn('batch_id', 'text', (c) => c.notNull())
    .addColumn('line', 'integer', (c) => c.notNull())
    .addColumn('custom_id', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    // pending → running (leased) → succeeded | failed; back to pending when a rate limit says wait.
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('not_before_ms', 'bigint', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at_ms', 'bigint')
    .addColumn('result', 'text')
    .addColumn('input_tokens', 'integer')
    .addColumn('output_tokens', 'integer')
    .addColumn('cached_tokens', 'integer')
    .addColumn('reasoning_tokens', 'integer')
    .addPrimaryKeyConstraint('batch_lines_pk', ['batch_id', 'line'])
    .execute();
  // Claims walk one state's lines in input order (pending ones, leased ones whose lease ran out), and
  // finalization reads one state's results in input order: both stop after a page.
  await db.schema
    .createIndex('batch_lines_state_idx')
    .on('batch_lines')
    .columns(['batch_id', 'state', 'line'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('batch_lines').ifExists().execute();
  await db.schema.dropTable('batches').ifExists().execute();
  await db.schema.dropTable('files').ifExists().execute();
}
