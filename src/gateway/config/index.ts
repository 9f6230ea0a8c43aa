export {
  GatewayConfigSchema,
  StrategySchema,
  CacheSchema,
  RetrySchema,
  CircuitBreakerSchema,
  DeploymentSchema,
  type GatewayConfig,
  type TargetConfig,
  type StrategyMode,
  type StrategyConfig,
  type CacheConfig,
  type RetryConfig,
  type CircuitBreakerConfig,
  type DeploymentConfig,
} from './config-schema.js';
export type { BeforeRequestHook, AfterRequestHook, InputGuardrail, OutputGuardrail } from './hook-schemas.js';
export {
  parseConfig,
  parseConfigHeader,
  isStoredConfigRef,
  CONFIG_HEADER,
  type ParseConfigOptions,
  type StoredConfigRef,
} from './parse-config.js';
