export type { GatewayDeps } from './pipeline-types.js';
