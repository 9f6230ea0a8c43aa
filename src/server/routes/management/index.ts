/**
 * The management API: API keys, virtual keys, catalog providers, stored configs, guardrails, prompts
 * and prompt partials, rate-limit policies, semantic cache invalidation, and workspaces. Every route
 * here but `GET /api-keys/self` (any key's own record) needs an admin key and works inside the caller's
 * workspace (workspaces: its organisation). The routes live in their own Fastify scope so the admin check applies to them and to nothing else.
 */
import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../../../gateway/deps.js';
import { requireRole } from '../../auth.js';
import { registerApiKeyRoutes, registerApiKeySelfRoute } from './api-keys.js';
import { registerConfigRoutes } from './configs.js';
import { CREDENTIAL_ROUTES, registerCredentialRoutes } from './credentials.js';
import { registerGuardrailRoutes } from './guardrails.js';
import { registerPromptRoutes } from './prompts.js';
import { registerRateLimitPolicyRoutes } from './rate-limit-policies.js';
import { registerSemanticCacheRoutes } from './semantic-cache.js';
import { registerWorkspaceRoutes } from './workspaces.js';

export async function registerManagementRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  // Any key may ask who it is: outside the admin scope.
  await registerApiKeySelfRoute(app, deps);
  await app.register(async (scope) => {
    // onRequest (after the /v1 scope's authentication, before the body is read): a member hears 403
    // whatever the body, and no body of a member is parsed at all.
    scope.addHook('onRequest', async (request) => {
      requireRole(request.gw.apiKey, 'admin');
    });
    await registerApiKeyRoutes(scope, deps);
    for (const routes of CREDENTIAL_ROUTES) await registerCredentialRoutes(scope, deps, routes);
    await registerConfigRoutes(scope, deps);
    await registerGuardrailRoutes(scope, deps);
    await registerPromptRoutes(scope, deps);
    await registerRateLimitPolicyRoutes(scope, deps);
    await registerSemanticCacheRoutes(scope, deps);
    await registerWorkspaceRoutes(scope, deps);
  });
}
