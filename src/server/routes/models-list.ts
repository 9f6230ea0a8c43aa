/**
 * `GET /v1/models`: with a provider selected (headers or config) it is the provider's own model list,
 * passed through; without one, the workspace's model catalog (`@slug` providers) as an OpenAI model list.
 */
import type { FastifyInstance } from 'fastify';
import { HEADERS, headerValue } from '../../gateway/context.js';
import type { GatewayDeps } from '../../gateway/deps.js';
import { passThrough } from './passthrough.js';

export async function registerModelListRoute(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  app.get('/models', async (request, reply) => {
    const headers = request.headers;
    const selects =
      headerValue(headers, HEADERS.provider) ??
      headerValue(headers, HEADERS.virtualKey) ??
      headerValue(headers, HEADERS.config);
    if (selects) return passThrough(deps, request, reply);
    const providers = await deps.store.listCredentials(request.gw.apiKey.workspace_id, 'provider');
    return {
      object: 'list',
      data: providers
        .filter((entry) => entry.status === 'active')
        .map((entry) => ({
          id: `@${entry.slug}`,
          object: 'model',
          created: entry.created_at,
          owned_by: entry.provider,
        })),
    };
  });
}
