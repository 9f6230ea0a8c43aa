/** Organisations and their workspaces. */
import { newId, newOrganisationId } from '../ids.js';
import { toOrganisation, toWorkspace } from '../rows.js';
import type { Organisation, OrganisationRepository, Workspace } from '../types.js';
import { insertOrConflict, nowSeconds, type RepositoryContext } from './context.js';

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
        () => db.insertInto('workspaces').values(workspace).execute(),
        `A workspace with slug '${input.slug}' already exists`,
      );
      changed({ resource: 'workspace', action: 'created', workspace_id: workspace.id, id: workspace.id });
      return workspace;
    },

    async getWorkspace(id) {
      const row = await db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toWorkspace(row) : undefined;
    },

    async listWorkspaces(organisation_id) {
      const rows = await db
        .selectFrom('workspaces')
        .selectAll()
        .where('organisation_id', '=', organisation_id)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toWorkspace);
    },
  };
}
