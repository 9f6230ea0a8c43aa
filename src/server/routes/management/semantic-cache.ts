/**
 * Invalidating the semantic cache (docs/cache.md): one entry by id (the `x-gateway-cache-entry-id` of the
 * answer that stored or used it), or every entry of a cache namespace. Each route works in the caller's
 * workspace, or in the one `?workspace_id=` names when the caller is an organisation-level admin key
 * (tenant.ts). Removed entries leave every node's index at once (the invalidation channel).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { stringQuery, type Query } from '../query-params.js';
import { GatewayError } from '../../../core/errors.js';
import type { GatewayDeps } from '../../../gateway/deps.js';
import { notFound, pathParam } from './route-helpers.js';
import { tenantOf } from './tenant.js';
import { deletedView } from './views.js';

const OBJECT = 'semantic_cache_entry';
/** As the `x-gateway-cache-namespace` header. */
const MAX_NAMESPACE_LENGTH = 256;

export async function registerSemanticCacheRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const { store } = deps;
  const { cache } = deps.routing.semantic;
  const path = '/cache/semantic/entries';
  const queryTenant = (request: FastifyRequest) => {
    const workspace = stringQuery(request.query as Query, 'workspace_id', 128);
    return tenantOf(store, request.gw.apiKey, { workspace_id: workspace === '' ? undefined : workspace });
  };

  app.delete(`${path}/:id`, async (request) => {
    const id = pathParam(request.params, 'id');
    const tenant = await queryTenant(request);
    if (!(await cache.removeEntry(tenant.workspace_id, id))) throw notFound('semantic cache entry', id, 'id');
    return deletedView(OBJECT, id);
  });

  app.delete(path, async (request) => {
    const namespace = stringQuery(request.query as Query, 'namespace', MAX_NAMESPACE_LENGTH);
    if (namespace === undefined) {
      throw new GatewayError(
        'invalid_query',
        'namespace is required (empty for the entries of requests without a cache namespace)',
        { param: 'namespace' },
      );
    }
    const tenant = await queryTenant(request);
    const deleted = await cache.removeNamespace(tenant.workspace_id, namespace);
    return { object: `${OBJECT}.list.deleted`, namespace, deleted };
  });
}
