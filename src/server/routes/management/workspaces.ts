/**
 * Workspaces of the caller's organisation. Creating one is the organisation's business: only an
 * organisation-level admin key may (tenant.ts); the admin key of any other workspace manages that
 * workspace alone, and lists only it. A new workspace comes with its first admin key, returned once:
 * every other management route works inside the workspace of the key that calls it, so without that key
 * nobody could manage the new workspace, so the two are created in one transaction.
 *
 * Deleting one is the organisation's business too; the home workspace, where the organisation-level keys
 * live, is never deleted (409). A deleted workspace is unusable at once on every node: its keys, virtual
 * keys, configs, prompts, guardrails and policies go in one transaction (store.deleteWorkspace), and the
 * change drops them from every node's lookup cache (invalidation.ts). Its batches at a provider are asked
 * to cancel first, while its credentials still answer for them; its cached answers are removed after
 * (cache/workspace-answers.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../../../gateway/deps.js';
import { GatewayError } from '../../../core/errors.js';
import { validateCreateWorkspace } from './body-schemas.js';
import { cancelProviderBatch } from '../../../gateway/provider-resources/provider-batches.js';
import { removeWorkspaceAnswers } from '../../../gateway/cache/workspace-answers.js';
import { homeWorkspace, isOrganisationAdmin } from './tenant.js';
import { pathParam } from './route-helpers.js';
import { apiKeyView, deletedView, listView, workspaceView } from './views.js';

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

  app.delete('/workspaces/:id', async (request) => {
    const caller = request.gw.apiKey;
    const workspaces = await store.listWorkspaces(caller.organisation_id);
    if (!isOrganisationAdmin(caller, workspaces)) {
      throw new GatewayError(
        'forbidden',
        "Only an organisation-level admin key (an admin key of the organisation's home workspace) may delete workspaces",
      );
    }
    const named = pathParam(request.params, 'id');
    const workspace = workspaces.find((w) => w.id === named) ?? workspaces.find((w) => w.slug === named);
    if (!workspace) {
      throw new GatewayError('not_found', `No workspace "${named}" in this organisation`, {
        param: 'workspace_id',
      });
    }
    if (workspace.id === homeWorkspace(workspaces)?.id) {
      throw new GatewayError(
        'conflict',
        `Workspace ${workspace.id} is the organisation's home workspace (slug ${workspace.slug}): it cannot be deleted`,
        { param: 'workspace_id' },
      );
    }
    await cancelProviderBatches(deps, workspace.id);
    if (!(await store.transaction((tx) => tx.deleteWorkspace(caller.organisation_id, workspace.id)))) {
      // Deleted meanwhile by another call.
      throw new GatewayError('not_found', `No workspace "${named}" in this organisation`, {
        param: 'workspace_id',
      });
    }
    await removeWorkspaceAnswers(deps, workspace.id);
    return deletedView('workspace', workspace.id);
  });
}

/**
 * Asks the provider to cancel the workspace's batches it runs (`completion_window: 24h`) while the
 * workspace's credentials still answer for them; one that cannot be cancelled there is left to the
 * provider (the deletion goes on: nothing of its answer can be read any more).
 */
async function cancelProviderBatches(deps: GatewayDeps, workspaceId: string): Promise<void> {
  const running = await deps.store.batches.withStatus(['validating', 'in_progress', 'finalizing']);
  for (const batch of running) {
    if (batch.workspace_id !== workspaceId || batch.completion_window !== '24h') continue;
    await cancelProviderBatch(deps, batch).catch((err: unknown) =>
      deps.logger.warn(
        { err, batch: batch.id },
        'workspace deletion: a provider batch could not be cancelled',
      ),
    );
  }
}
