import type { FastifyInstance } from 'fastify';
import { buildOpenApiDocument } from '../openapi.js';

/** `GET /v1/openapi.json`: the gateway's own OpenAPI document (no key needed). */
export async function registerOpenApiRoute(app: FastifyInstance): Promise<void> {
  let document: unknown;
  app.get('/openapi.json', async () => (document ??= buildOpenApiDocument()));
}
