export {
  GatewayConfigSchema,
  type GatewayConfig,
  type TargetConfig,
  type RetryConfig,
  type CircuitBreakerConfig,
} from './config-schema.js';
export type { BeforeRequestHook, AfterRequestHook, InputGuardrail, OutputGuardrail } from './hook-schemas.js';
export {
  parseConfig,
  parseConfigHeader,
  isStoredConfigRef,
  type ParseConfigOptions,
  type StoredConfigRef,
} from './parse-config.js';
export { catalogModel, keyAsWritten } from './model-provider.js';
export {
  hasHooks,
  hooksOf,
  guardrailSpec,
  isStoredRef,
  DEFAULT_CHECK_TIMEOUT_MS,
  type CheckSpec,
  type Feedback,
  type HookItem,
  type HookSpec,
  type NodeHooks,
  type StoredGuardrailRef,
} from './hook-specs.js';
