/**
 * Fine-tuning jobs, provider copies of files and provider batches (0014_provider_jobs). A fine-tuning
 * job's call (the headers that chose its provider) is encrypted at rest, bound to the job's id, like a
 * batch's.
 */
import type { Selectable } from 'kysely';
import { decryptSecret, encryptSecret } from '../crypto.js';
import type { BatchCall } from '../file-batch-types.js';
import { newId } from '../ids.js';
import {
  FINISHED_FINE_TUNING_STATUSES,
  type FineTuningJobRepository,
  type ProviderBatchRepository,
  type ProviderFileRepository,
  type StoredFineTuningJob,
} from '../provider-job-types.js';
import { toNumber } from '../rows.js';
import type { FineTuningJobsTable } from '../schema.js';
import type { RepositoryContext } from './context.js';
import { metadataEquals } from './metadata-filter.js';

function toJob(row: Selectable<FineTuningJobsTable>): StoredFineTuningJob {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    provider: row.provider,
    provider_job_id: row.provider_job_id,
    account: row.account,
    status: row.status,
    object: JSON.parse(row.object) as Record<string, unknown>,
    file_ids: JSON.parse(row.file_ids) as Record<string, string>,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, string>),
    created_at: toNumber(row.created_at),
  };
}

export function createFineTuningJobRepository({
  db,
  keys,
  kind,
}: RepositoryContext): FineTuningJobRepository {
  return {
    async create(input) {
      const now = Date.now();
      const id = input.id ?? newId('ftjob', now);
      const row: FineTuningJobsTable = {
        id,
        workspace_id: input.workspace_id,
        provider: input.provider,
        provider_job_id: input.provider_job_id,
        account: input.account,
        status: input.status,
        object: JSON.stringify(input.object),
        file_ids: JSON.stringify(input.file_ids),
        call_encrypted: encryptSecret(keys.encryption, JSON.stringify(input.call), id),
        metadata:
          input.metadata && Object.keys(input.metadata).length > 0 ? JSON.stringify(input.metadata) : null,
        created_at: Math.floor(now / 1000),
        updated_at_ms: now,
      };
      await db.insertInto('fine_tuning_jobs').values(row).execute();
      return toJob(row);
    },

    async get(workspaceId, id) {
      const row = await db
        .selectFrom('fine_tuning_jobs')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? toJob(row) : undefined;
    },

    async list(workspaceId, query) {
      // Ids sort by creation time (store/ids.ts): the id is the cursor and the order.
      let builder = db.selectFrom('fine_tuning_jobs').selectAll().where('workspace_id', '=', workspaceId);
      if (query.after !== undefined) builder = builder.where('id', '<', query.after);
      if (query.metadata === null) builder = builder.where('metadata', 'is', null);
      for (const [key, value] of Object.entries(query.metadata ?? {})) {
        builder = builder.where(metadataEquals(kind, 'fine_tuning_jobs.metadata', key, value));
      }
      const rows = await builder
        .orderBy('id', 'desc')
        .limit(query.limit + 1)
        .execute();
      return { data: rows.slice(0, query.limit).map(toJob), has_more: rows.length > query.limit };
    },

    async saw(id, status, object) {
      let update = db
        .updateTable('fine_tuning_jobs')
        .set({ status, object: JSON.stringify(object), updated_at_ms: Date.now() })
        .where('id', '=', id);
      if (!(FINISHED_FINE_TUNING_STATUSES as readonly string[]).includes(status)) {
        update = update.where('status', 'not in', FINISHED_FINE_TUNING_STATUSES);
      }
      await update.execute();
    },

    async callOf(id) {
      const row = await db
        .selectFrom('fine_tuning_jobs')
        .select('call_encrypted')
        .where('id', '=', id)
        .executeTakeFirst();
      if (!row) return undefined;
      return JSON.parse(decryptSecret(keys.encryption, row.call_encrypted, id)) as BatchCall;
    },
  };
}

export function createProviderFileRepository({ db }: RepositoryContext): ProviderFileRepository {
  function row(fileId: string, account: string) {
    return db
      .selectFrom('provider_files')
      .selectAll()
      .where('file_id', '=', fileId)
      .where('account', '=', account)
      .executeTakeFirst();
  }
  return {
    async claim(fileId, account, provider, staleMs) {
      const now = Date.now();
      const inserted = await db
        .insertInto('provider_files')
        .values({ file_id: fileId, account, provider, provider_file_id: null, claimed_at_ms: now })
        .onConflict((oc) => oc.columns(['file_id', 'account']).doNothing())
        .returning('file_id')
        .executeTakeFirst();
      if (inserted) return { state: 'claimed', claimed_at_ms: now };
      const existing = await row(fileId, account);
      if (!existing) return this.claim(fileId, account, provider, staleMs);
      if (existing.provider_file_id !== null) {
        return { state: 'known', provider_file_id: existing.provider_file_id };
      }
      const claimedAt = toNumber(existing.claimed_at_ms);
      if (now - claimedAt < staleMs) return { state: 'busy', claimed_at_ms: claimedAt };
      // The claimer went quiet: take the upload over, unless someone else just did.
      const taken = await db
        .updateTable('provider_files')
        .set({ claimed_at_ms: now })
        .where('file_id', '=', fileId)
        .where('account', '=', account)
        .where('provider_file_id', 'is', null)
        .where('claimed_at_ms', '=', claimedAt)
        .executeTakeFirst();
      return toNumber(taken.numUpdatedRows) > 0
        ? { state: 'claimed', claimed_at_ms: now }
        : { state: 'busy', claimed_at_ms: now };
    },

    async renew(fileId, account, claimedAtMs) {
      // Later than the claim it renews, even on a clock that has not moved: it names the claim from now on.
      const now = Math.max(Date.now(), claimedAtMs + 1);
      const renewed = await db
        .updateTable('provider_files')
        .set({ claimed_at_ms: now })
        .where('file_id', '=', fileId)
        .where('account', '=', account)
        .where('provider_file_id', 'is', null)
        .where('claimed_at_ms', '=', claimedAtMs)
        .executeTakeFirst();
      return toNumber(renewed.numUpdatedRows) > 0 ? now : undefined;
    },

    async remember(fileId, account, claimedAtMs, providerFileId) {
      await db
        .updateTable('provider_files')
        .set({ provider_file_id: providerFileId })
        .where('file_id', '=', fileId)
        .where('account', '=', account)
        .where('claimed_at_ms', '=', claimedAtMs)
        .execute();
    },

    async release(fileId, account, claimedAtMs) {
      await db
        .deleteFrom('provider_files')
        .where('file_id', '=', fileId)
        .where('account', '=', account)
        .where('provider_file_id', 'is', null)
        .where('claimed_at_ms', '=', claimedAtMs)
        .execute();
    },

    async forget(fileId, account, providerFileId) {
      await db
        .deleteFrom('provider_files')
        .where('file_id', '=', fileId)
        .where('account', '=', account)
        .where('provider_file_id', '=', providerFileId)
        .execute();
    },
  };
}

export function createProviderBatchRepository({ db }: RepositoryContext): ProviderBatchRepository {
  return {
    async create(batch) {
      await db
        .insertInto('provider_batches')
        .values({
          batch_id: batch.batch_id,
          provider: batch.provider,
          provider_batch_id: batch.provider_batch_id,
          account: batch.account,
          object: JSON.stringify(batch.object),
          polls: 0,
          updated_at_ms: Date.now(),
        })
        .execute();
    },

    async get(batchId) {
      const row = await db
        .selectFrom('provider_batches')
        .selectAll()
        .where('batch_id', '=', batchId)
        .executeTakeFirst();
      if (!row) return undefined;
      return {
        batch_id: row.batch_id,
        provider: row.provider,
        provider_batch_id: row.provider_batch_id,
        account: row.account,
        object: JSON.parse(row.object) as Record<string, unknown>,
        polls: toNumber(row.polls),
      };
    },

    async saw(batchId, object) {
      await db
        .updateTable('provider_batches')
        .set((eb) => ({
          object: JSON.stringify(object),
          polls: eb('polls', '+', 1),
          updated_at_ms: Date.now(),
        }))
        .where('batch_id', '=', batchId)
        .execute();
    },
  };
}
