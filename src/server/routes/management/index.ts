import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../../../gateway/deps.js';

/** The management API: API keys, virtual keys, provider slugs, stored configs, workspaces. */
export async function registerManagementRoutes(_app: FastifyInstance, _deps: GatewayDeps): Promise<void> {}
