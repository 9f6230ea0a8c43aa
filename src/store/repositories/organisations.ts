/** Organisations and their workspaces. */
import { newId, newOrganisationId } from '../ids.js';
import { toNumber, toOrganisation, toWorkspace } from '../rows.js';
import type { Organisation, OrganisationRepository, Workspace } from '../types.js';
import { inTransaction, insertOrConflict, nowSeconds, type RepositoryContext } from './context.js';

/** The slug a deleted workspace's row keeps: no live workspace can take it (a slug has no `:`), and its own
 * is free again. */
function deletedSlug(id: string): string {
  return `deleted:${id}`;
}

export function createOrganisationRepository({ db, changed }: RepositoryContext): OrganisationRepository {
  return {
    async createOrganisation(input) {
      const organisation: Organisation = {
        id: newOrganisationId(),
        name: input.name,
        created_at: nowSeconds(),
      };
      await db.insertInto('organisations').values(organisation).execute();
      return organisation;
    },

    async getOrganisation(id) {
      const row = await db.selectFrom('organisations').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toOrganisation(row) : undefined;
    },

    async listOrganisations() {
      const rows = await db
        .selectFrom('organisations')
        .selectAll()
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toOrganisation);
    },

    async createWorkspace(input) {
      const workspace: Workspace = { id: newId('ws'), ...input, created_at: nowSeconds() };
      await insertOrConflict(
        () =>
          db
            .insertInto('workspaces')
            .values({ ...workspace, deleted_at: null })
            .execute(),
        `A workspace with slug '${input.slug}' already exists`,
      );
      changed({ resource: 'workspace', action: 'created', workspace_id: workspace.id, id: workspace.id });
      return workspace;
    },

    async getWorkspace(id) {
      const row = await db
        .selectFrom('workspaces')
        .selectAll()
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      return row ? toWorkspace(row) : undefined;
    },

    async listWorkspaces(organisation_id) {
      const rows = await db
        .selectFrom('workspaces')
        .selectAll()
        .where('organisation_id', '=', organisation_id)
        .where('deleted_at', 'is', null)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toWorkspace);
    },

    async deleteWorkspace(organisation_id, id) {
      const now = nowSeconds();
      const deleted = await inTransaction(db, async (trx) => {
        const gone = await trx
          .updateTable('workspaces')
          .set({ deleted_at: now, slug: deletedSlug(id) })
          .where('id', '=', id)
          .where('organisation_id', '=', organisation_id)
          .where('deleted_at', 'is', null)
          .executeTakeFirst();
        if (toNumber(gone.numUpdatedRows) === 0) return false;
        // Its keys and rate-limit policies go (nothing names them afterwards); the documents logs may
        // name stay as deleted rows, as their own DELETE leaves them.
        await trx.deleteFrom('api_keys').where('workspace_id', '=', id).execute();
        await trx.deleteFrom('rate_limit_policies').where('workspace_id', '=', id).execute();
        // Stored Responses hold the conversations themselves, and no key could delete them any more.
        await trx.deleteFrom('responses').where('workspace_id', '=', id).execute();
        for (const table of ['credentials', 'configs', 'guardrails', 'prompts', 'prompt_partials'] as const) {
          await trx
            .updateTable(table)
            .set({ deleted_at: now })
            .where('workspace_id', '=', id)
            .where('deleted_at', 'is', null)
            .execute();
        }
        // Batches under way stop as a cancel stops them; the results files any batch still writes expire
        // as they are written.
        await trx
          .updateTable('batches')
          .set({ status: 'cancelling', cancelling_at: now })
          .where('workspace_id', '=', id)
          .where('status', 'in', ['validating', 'in_progress'])
          .execute();
        await trx
          .updateTable('batches')
          .set({ output_expires_after: 0 })
          .where('workspace_id', '=', id)
          .execute();
        // Its semantic cache entries expire now: never read again, and swept by the nodes that use the
        // cache should the deletion's own clean-up of them (gateway/cache/workspace-answers.ts) not run.
        await trx
          .updateTable('semantic_cache_entries')
          .set({ expires_at_ms: now * 1000 })
          .where('workspace_id', '=', id)
          .where('expires_at_ms', '>', now * 1000)
          .execute();
        // Its files expire now: the expired-files sweep deletes their contents and records.
        await trx
          .updateTable('files')
          .set({ expires_at: now })
          .where('workspace_id', '=', id)
          .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
          .execute();
        return true;
      });
      if (deleted) changed({ resource: 'workspace', action: 'deleted', workspace_id: id, id });
      return deleted;
    },
  };
}
