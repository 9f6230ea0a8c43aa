/**
 * Turns a config (inline from the `x-gateway-config` header, or loaded from the store) into a
 * typed, checked GatewayConfig, once per request, before anything is routed.
 */
import { GatewayError } from '../../core/errors.js';
import { checkConfigRules, type ConfigRuleOptions } from './config-rules.js';
import { GatewayConfigSchema, type GatewayConfig } from './config-schema.js';
import { checkHooks } from './hook-specs.js';
import { configKeySpelling } from './key-spellings.js';
import { withModelProvider } from './model-provider.js';
import { compileValidator, fieldError } from '../../core/validator/compile-validator.js';

const CONFIG_HEADER = 'x-gateway-config';

export type ParseConfigOptions = ConfigRuleOptions;

/** The header named a stored config; the caller loads it and passes it to `parseConfig`. */
export interface StoredConfigRef {
  storedConfigId: string;
}

const validator = compileValidator(GatewayConfigSchema, {
  code: 'invalid_config',
  rootPath: 'config',
  subject: 'config',
  rootParam: 'config',
  spellingOf: configKeySpelling,
});

/** Stored configs are addressed by slug (`pc-prod-fallback`) or id (`cfg_01H…`). */
const STORED_CONFIG_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,255}$/;

export function parseConfig(raw: unknown, options: ParseConfigOptions = {}): GatewayConfig {
  const config = normalized(validator.assert(raw), 'config');
  checkConfigRules(config, 'config', options);
  checkHooks(config, 'config');
  return config;
}

/**
 * Every node of the tree written as the reference gateway's configs write it, in the interface's form: a
 * copy of each node that changes (the parsed object may be a stored config's, kept for other requests).
 */
function normalized(node: GatewayConfig, path: string): GatewayConfig {
  const targets = node.targets?.map((target, i) => normalized(target, `${path}.targets[${i}]`));
  const changedTarget = targets?.some((target, i) => target !== node.targets![i]) === true;
  const own = withModelProvider(withStrategyBreaker(node, path));
  if (!changedTarget) return own;
  return { ...own, targets };
}

/**
 * The reference gateway reads a node's circuit breaker from `strategy.cb_config`, where configs written for
 * it put it; the interface has it as the node's `cb_config`. The first becomes the second; a node giving
 * both is refused.
 */
function withStrategyBreaker(node: GatewayConfig, path: string): GatewayConfig {
  const breaker = node.strategy?.cb_config;
  if (breaker === undefined) return node;
  if (node.cb_config !== undefined) {
    throw fieldError(
      'invalid_config',
      `${path}.strategy.cb_config`,
      'is given beside cb_config: give the circuit breaker once',
    );
  }
  const { cb_config: _moved, ...strategy } = node.strategy!;
  return { ...node, strategy, cb_config: breaker };
}

export function parseConfigHeader(
  headerValue: string,
  options: ParseConfigOptions = {},
): GatewayConfig | StoredConfigRef {
  const value = headerValue.trim();
  if (value.startsWith('{')) {
    let raw: unknown;
    try {
      raw = JSON.parse(value);
    } catch (error) {
      throw new GatewayError(
        'invalid_config',
        `${CONFIG_HEADER} is not valid JSON: ${(error as Error).message}`,
        {
          param: CONFIG_HEADER,
          cause: error,
        },
      );
    }
    return parseConfig(raw, options);
  }
  if (!STORED_CONFIG_ID.test(value)) {
    throw new GatewayError(
      'invalid_config',
      `${CONFIG_HEADER} must be a JSON object or the id of a stored config (letters, digits and . _ : @ -)`,
      { param: CONFIG_HEADER },
    );
  }
  return { storedConfigId: value };
}

export function isStoredConfigRef(value: GatewayConfig | StoredConfigRef): value is StoredConfigRef {
  return 'storedConfigId' in value;
}
