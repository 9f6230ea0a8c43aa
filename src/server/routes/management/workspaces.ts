/**
 * Workspaces of the caller's organisation. A new workspace comes with its first admin key, returned once:
 * every other management route works inside the workspace of the key that calls it, so without that key
 * nobody could manage the new workspace.
 */
import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../../../gateway/deps.js';
import type { Workspace } from '../../../store/types.js';
import { validateCreateWorkspace } from './body-schemas.js';
import { listView, apiKeyView } from './views.js';

function workspaceView(workspace: Workspace) {
  return { object: 'workspace' as const, ...workspace };
}

export async function registerWorkspaceRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const { store } = deps;

  app.post('/workspaces', async (request) => {
    const body = validateCreateWorkspace(request.body);
    const organisationId = request.gw.apiKey.organisation_id;
    const workspace = await store.createWorkspace({
      organisation_id: organisationId,
      name: body.name,
      slug: body.slug,
    });
    const { key, value } = await store.createApiKey({
      organisation_id: organisationId,
      workspace_id: workspace.id,
      name: `admin (workspace ${workspace.slug})`,
      role: 'admin',
    });
    return { ...workspaceView(workspace), admin_key: { ...apiKeyView(key), key: value } };
  });

  app.get('/workspaces', async (request) => {
    const workspaces = await store.listWorkspaces(request.gw.apiKey.organisation_id);
    return listView(workspaces.map(workspaceView));
  });
}
