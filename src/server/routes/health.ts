import type { FastifyInstance } from 'fastify';

/** `GET /health`: no key needed; answers once the store is migrated and the server listens. */
export async function registerHealthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/health', async () => ({ status: 'ok' }));
}
