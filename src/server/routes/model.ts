/** The model endpoints: chat completions, completions, embeddings — one pipeline, endpoint as data. */
import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../../gateway/deps.js';
import { handleModelCall } from '../../gateway/pipeline.js';
import type { EndpointKind } from '../../providers/types.js';
import {
  validateChatCompletionRequest,
  validateCompletionRequest,
  validateEmbeddingRequest,
} from '../../core/schemas/index.js';
import { registerModelListRoute } from './models-list.js';
import { assertBodyDepth } from '../body-depth.js';

const ENDPOINTS: Array<{ path: string; kind: EndpointKind; validate: (body: unknown) => unknown }> = [
  { path: '/chat/completions', kind: 'chat', validate: validateChatCompletionRequest },
  { path: '/completions', kind: 'completions', validate: validateCompletionRequest },
  { path: '/embeddings', kind: 'embeddings', validate: validateEmbeddingRequest },
];

export async function registerModelRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  for (const endpoint of ENDPOINTS) {
    app.post(endpoint.path, async (request, reply) => {
      assertBodyDepth(request.body);
      const body = endpoint.validate(request.body) as Record<string, unknown>;
      await handleModelCall(deps, { endpoint: endpoint.kind, body, ctx: request.gw, reply });
      return reply;
    });
  }
  await registerModelListRoute(app, deps);
}
