/**
 * Work that runs on a provider's own APIs: fine-tuning jobs, batches on a provider's Batch API
 * (`completion_window: "24h"`), and the provider's copies of the gateway's files.
 *
 * A fine-tuning job row maps the gateway's job id to the provider's, with the request headers that chose
 * the provider (encrypted, like a batch's: a virtual key or stored config is kept by reference, a client's
 * own provider key only encrypted) and the provider's job object as last seen. A provider file row
 * remembers that a gateway file was uploaded to one provider account (a hash of its address and
 * credentials, never the credentials), so it is sent there at most once. A provider batch row ties a
 * gateway batch to the provider's batch.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('fine_tuning_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_job_id', 'text', (c) => c.notNull())
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    // The provider's job object as last seen (JSON).
    .addColumn('object', 'text', (c) => c.notNull())
    // The gateway file ids the client named, by the provider file id they were sent as (JSON).
    .addColumn('file_ids', 'text', (c) => c.notNull())
    .addColumn('call_encrypted', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('fine_tuning_jobs_workspace_idx')
    .on('fine_tuning_jobs')
    .columns(['workspace_id', 'id'])
    .execute();

  await db.schema
    .createTable('provider_files')
    .addColumn('file_id', 'text', (c) => c.notNull())
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    // Null while one node uploads it (`claimed_at_ms` says since when).
    .addColumn('provider_file_id', 'text')
    .addColumn('claimed_at_ms', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('provider_files_pk', ['file_id', 'account'])
    .execute();

  await db.schema
    .createTable('provider_batches')
    .addColumn('batch_id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_batch_id', 'text', (c) => c.notNull())
    .addColumn('account', 'text', (c) => c.notNull())
    // The provider's batch object as last seen (JSON).
    .addColumn('object', 'text', (c) => c.notNull())
    .addColumn('polls', 'integer', (c) => c.notNull())
    .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('provider_batches').ifExists().execute();
  await db.schema.dropTable('provider_files').ifExists().execute();
  await db.schema.dropTable('fine_tuning_jobs').ifExists().execute();
}
