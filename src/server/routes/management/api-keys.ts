/**
 * Gateway API keys of the caller's workspace. A key's value is returned once, when it is created or
 * rotated; the store keeps only its hash. Every change drops the cached keys, so a revoked, expired,
 * demoted or rotated key loses its rights (or its old value) on the very next request.
 *
 * A key may not revoke, delete, demote or expire itself now: done by mistake, that could leave a workspace
 * without an admin key, and a deliberate change is one request away with another admin key.
 *
 * The key whose value GATEWAY_ADMIN_KEY sets belongs to that setting: rotating, revoking, deleting, demoting
 * or expiring it is refused. Done here, the setting would name a value that no longer works (a lock-out for
 * whoever relies on it), and the next start would quietly make it work again as a second key, or not at all
 * once revoked. The setting is changed instead; the key with the old value is then an ordinary key.
 */
import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../../../gateway/deps.js';
import { GatewayError } from '../../../core/errors.js';
import type { ApiKey } from '../../../store/types.js';
import { validateCreateApiKey, validateUpdateApiKey } from './body-schemas.js';
import { notFound, nowSeconds, pathParam, requireSomeField } from './route-helpers.js';
import { isOrganisationAdmin } from './tenant.js';
import { apiKeyView, deletedView, listView, workspaceView } from './views.js';

function refuseSelf(caller: ApiKey, id: string, action: string): void {
  if (caller.id === id) {
    throw new GatewayError('conflict', `An API key cannot ${action} itself; use another admin key`, {
      param: 'id',
    });
  }
}

async function refuseSettingsKey(
  deps: GatewayDeps,
  caller: ApiKey,
  id: string,
  action: string,
): Promise<void> {
  const value = deps.settings.adminKey;
  if (value === undefined) return;
  // By value rather than by name: the name may be changed, and the value is what the setting owns.
  const owned = await deps.store.findApiKeyByValue(value);
  // Only in its own workspace: to a key of another workspace the id is unknown (404), as for any key.
  if (owned?.id === id && owned.workspace_id === caller.workspace_id) {
    throw new GatewayError(
      'conflict',
      `API key ${id} is the one GATEWAY_ADMIN_KEY sets and cannot be ${action} here; change GATEWAY_ADMIN_KEY ` +
        'and restart the gateway instead (the key with the old value can then be revoked)',
      { param: 'id' },
    );
  }
}

/**
 * `GET /api-keys/self`: the calling key's own record (never its value), its workspace and whether it is
 * an organisation-level key, for any key, a member's included: what a client such as the web console
 * reads to know what the key it holds may do, rather than finding out from 403s.
 */
export async function registerApiKeySelfRoute(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  app.get('/api-keys/self', async (request) => {
    const caller = request.gw.apiKey;
    const workspaces = await deps.store.listWorkspaces(caller.organisation_id);
    const workspace = workspaces.find((w) => w.id === caller.workspace_id);
    return {
      ...apiKeyView(caller),
      workspace: workspace ? workspaceView(workspace) : null,
      scope: isOrganisationAdmin(caller, workspaces) ? ('organisation' as const) : ('workspace' as const),
    };
  });
}

export async function registerApiKeyRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const { store } = deps;

  app.post('/api-keys', async (request) => {
    const body = validateCreateApiKey(request.body);
    if (body.expires_at !== undefined && body.expires_at !== null && body.expires_at <= nowSeconds()) {
      throw new GatewayError('invalid_body', 'expires_at must be in the future', { param: 'expires_at' });
    }
    const caller = request.gw.apiKey;
    const { key, value } = await store.createApiKey({
      organisation_id: caller.organisation_id,
      workspace_id: caller.workspace_id,
      name: body.name,
      role: body.role,
      expires_at: body.expires_at ?? null,
      metadata: body.metadata ?? {},
    });
    return { ...apiKeyView(key), key: value };
  });

  app.get('/api-keys', async (request) => {
    const keys = await store.listApiKeys(request.gw.apiKey.workspace_id);
    return listView(keys.map(apiKeyView));
  });

  app.get('/api-keys/:id', async (request) => {
    const id = pathParam(request.params, 'id');
    const key = await store.getApiKey(request.gw.apiKey.workspace_id, id);
    if (!key) throw notFound('API key', id, 'id');
    return apiKeyView(key);
  });

  app.patch('/api-keys/:id', async (request) => {
    const id = pathParam(request.params, 'id');
    const body = validateUpdateApiKey(request.body);
    requireSomeField(body, ['name', 'role', 'metadata', 'expires_at']);
    const caller = request.gw.apiKey;
    if (body.role === 'member') {
      await refuseSettingsKey(deps, caller, id, 'demoted');
      refuseSelf(caller, id, 'demote');
    }
    // The setting makes its value a valid admin key, with no end: no expiry of any time for that key.
    if (typeof body.expires_at === 'number') await refuseSettingsKey(deps, caller, id, 'given an expiry');
    // A past expires_at is allowed here: it is how a key is made to expire now. On the calling key itself
    // that is a revocation by another name, refused like one; a later expiry of its own is allowed.
    if (typeof body.expires_at === 'number' && body.expires_at <= nowSeconds()) {
      refuseSelf(caller, id, 'expire');
    }
    const key = await store.updateApiKey(caller.workspace_id, id, body);
    if (!key) throw notFound('API key', id, 'id');
    return apiKeyView(key);
  });

  app.post('/api-keys/:id/revoke', async (request) => {
    const id = pathParam(request.params, 'id');
    const caller = request.gw.apiKey;
    // The setting's reason first: another admin key would be refused too.
    await refuseSettingsKey(deps, caller, id, 'revoked');
    refuseSelf(caller, id, 'revoke');
    const key = await store.updateApiKey(caller.workspace_id, id, { status: 'revoked' });
    if (!key) throw notFound('API key', id, 'id');
    return apiKeyView(key);
  });

  // A new value for the same key: what policies, logs and analytics know the key by (its id) stays, so
  // rotating is not a new key plus a revocation. A key may rotate itself: its new value is in the answer.
  app.post('/api-keys/:id/rotate', async (request) => {
    const id = pathParam(request.params, 'id');
    const caller = request.gw.apiKey;
    await refuseSettingsKey(deps, caller, id, 'rotated');
    const workspaceId = caller.workspace_id;
    const rotated = await store.rotateApiKey(workspaceId, id);
    if (rotated) return { ...apiKeyView(rotated.key), key: rotated.value };
    const key = await store.getApiKey(workspaceId, id);
    if (!key) throw notFound('API key', id, 'id');
    throw new GatewayError('conflict', 'A revoked API key cannot be rotated; create a new key', {
      param: 'id',
    });
  });

  app.delete('/api-keys/:id', async (request) => {
    const id = pathParam(request.params, 'id');
    const caller = request.gw.apiKey;
    // The setting's reason first: another admin key would be refused too.
    await refuseSettingsKey(deps, caller, id, 'deleted');
    refuseSelf(caller, id, 'delete');
    const deleted = await store.deleteApiKey(caller.workspace_id, id);
    if (!deleted) throw notFound('API key', id, 'id');
    return deletedView('api_key', id);
  });
}
