/**
 * Workspaces of the caller's organisation. Creating one is the organisation's business: only an
 * organisation-level admin key may (tenant.ts); the admin key of any other workspace manages that
 * workspace alone, and lists only it. A new workspace comes with its first admin key, returned once:
 * every other management route works inside the workspace of the key that calls it, so without that key
 * nobody could manage the new workspace, so the two are created in one transaction.
 */
import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../../../gateway/deps.js';
import { GatewayError } from '../../../core/errors.js';
import { validateCreateWorkspace } from './body-schemas.js';
import { isOrganisationAdmin } from './tenant.js';
import { apiKeyView, listView, workspaceView } from './views.js';

export async function registerWorkspaceRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const { store } = deps;

  app.post('/workspaces', async (request) => {
    const caller = request.gw.apiKey;
    if (!isOrganisationAdmin(caller, await store.listWorkspaces(caller.organisation_id))) {
      throw new GatewayError(
        'forbidden',
        "Only an organisation-level admin key (an admin key of the organisation's home workspace) may create workspaces",
      );
    }
    const body = validateCreateWorkspace(request.body);
    const organisationId = caller.organisation_id;
    // One transaction: a workspace whose first key could not be stored would be one nobody can manage,
    // holding its slug.
    const { workspace, key, value } = await store.transaction(async (tx) => {
      const made = await tx.createWorkspace({
        organisation_id: organisationId,
        name: body.name,
        slug: body.slug,
      });
      const first = await tx.createApiKey({
        organisation_id: organisationId,
        workspace_id: made.id,
        name: `admin (workspace ${made.slug})`,
        role: 'admin',
      });
      return { workspace: made, ...first };
    });
    return { ...workspaceView(workspace), admin_key: { ...apiKeyView(key), key: value } };
  });

  app.get('/workspaces', async (request) => {
    const caller = request.gw.apiKey;
    const workspaces = await store.listWorkspaces(caller.organisation_id);
    const visible = isOrganisationAdmin(caller, workspaces)
      ? workspaces
      : workspaces.filter((workspace) => workspace.id === caller.workspace_id);
    return listView(visible.map(workspaceView));
  });
}
