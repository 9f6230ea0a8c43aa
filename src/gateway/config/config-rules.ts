/**
 * Rules of the config object that relate keys to each other, applied to the root and to every
 * target after the shape has been checked.
 */
import { validateConditionQuery } from '../routing/conditions.js';
import { weightsOf } from '../routing/weighted-pick.js';
import { GatewayError } from '../../core/errors.js';
import { HOP_BY_HOP } from '../../core/hop-by-hop.js';
import { fieldError } from '../../core/validator/compile-validator.js';
import { findAdapter } from '../../providers/registry.js';
import { sharedRequestTypeRefusal, type VertexCapacity } from '../../providers/vertex-ai/index.js';
import type { GatewayConfig } from './config-schema.js';

export interface ConfigRuleOptions {
  /**
   * The request carries `Authorization: Bearer <PROVIDER_API_KEY>`, which stands in for `api_key`
   * of any node that names a provider without credentials of its own.
   */
  authorizationPresent?: boolean;
  /**
   * The config is read as stored, for a call (a stored config, a batch's): a rule a config is held to only
   * where it is written (strategy.conditions on a node that is not conditional) is not judged again, so
   * one stored before that rule keeps answering its calls after an upgrade.
   */
  asStored?: boolean;
}

type Key = keyof GatewayConfig;

/** "Valid when at least one of these key combinations is present" (spec, config object). */
const REQUIRED_COMBINATIONS: readonly (readonly Key[])[] = [
  ['provider', 'api_key'],
  ['provider', 'custom_host'],
  ['virtual_key'],
  ['strategy', 'targets'],
  ['cache'],
  ['retry'],
  ['prompt_id'],
  ['forward_headers'],
  ['request_timeout'],
  ['provider', 'cloudc_access_key_id', 'cloudc_secret_access_key'],
  ['provider', 'cloudb_region', 'cloudb_service_account_json'],
  ['provider', 'cloudb_region', 'cloudb_project_id'],
  ['provider', 'cloudd_deployment_name', 'cloudd_deployment_type', 'cloudd_region', 'cloudd_api_version'],
  ['provider', 'cloudd_endpoint_name', 'cloudd_deployment_type'],
  ['after_request_hooks'],
  ['before_request_hooks'],
  ['input_guardrails'],
  ['output_guardrails'],
];

/** Key groups that, complete, are a provider credential in place of `api_key`. */
const CLOUD_CREDENTIALS: readonly (readonly Key[])[] = [
  ['cloudc_access_key_id', 'cloudc_secret_access_key'],
  ['cloudb_region', 'cloudb_service_account_json'],
  ['cloudb_region', 'cloudb_project_id'],
  ['cloudd_deployment_name', 'cloudd_deployment_type', 'cloudd_region', 'cloudd_api_version'],
  ['cloudd_endpoint_name', 'cloudd_deployment_type'],
];

const COMBINATIONS_TEXT = REQUIRED_COMBINATIONS.map((c) => c.join(' + ')).join(', ');

export function checkConfigRules(
  node: GatewayConfig,
  path: string,
  options: ConfigRuleOptions,
  /** The Vertex AI settings the node takes from its parent (routing/inherit.ts). */
  inherited: VertexCapacity = {},
): void {
  // A provider without credentials is the likelier mistake, so it is named before the generic rule.
  checkCredentials(node, path, options);
  checkCombination(node, path, options);
  checkCustomHost(node, path);
  checkForwardHeaders(node, path);
  checkCache(node, path);
  checkRetry(node, path);
  checkOverrides(node, path);
  checkStrategy(node, path, options);
  const capacity = vertexCapacity(node, inherited);
  checkVertexSharedRequestType(capacity, path);
  node.targets?.forEach((target, i) => checkConfigRules(target, `${path}.targets[${i}]`, options, capacity));
}

/**
 * Every provider the tree names outright (not an `@slug` of the catalog) is one the gateway has. A request
 * finds an unknown one when its target is resolved; a config stored for later is checked for it at once.
 */
export function checkProvidersKnown(node: GatewayConfig, path: string): void {
  const provider = node.provider;
  if (typeof provider === 'string' && !isProviderSlug(provider) && !findAdapter(provider)) {
    throw new GatewayError('unknown_provider', `Unknown provider "${provider}"`, {
      param: `${path}.provider`,
    });
  }
  node.targets?.forEach((target, i) => checkProvidersKnown(target, `${path}.targets[${i}]`));
}

/**
 * Request keys override_params may not set. Whether an answer streams is the client's choice, which the
 * gateway reads and answers in (a stream override made the provider stream to a gateway reading JSON, or
 * the reverse), and a stream's `stream_options` are the gateway's: it always asks for the usage.
 */
const NOT_OVERRIDABLE: Readonly<Record<string, string>> = {
  stream: "whether the answer streams is the client's request",
  stream_options: "the gateway sets a stream's options itself (it always asks for the usage)",
};

function checkOverrides(node: GatewayConfig, path: string): void {
  const overrides = node.override_params as Record<string, unknown> | undefined;
  if (!overrides) return;
  for (const [key, why] of Object.entries(NOT_OVERRIDABLE)) {
    if (overrides[key] !== undefined) {
      throw fieldError('invalid_config', `${path}.override_params.${key}`, `cannot be overridden: ${why}`);
    }
  }
}

function has(node: GatewayConfig, key: Key): boolean {
  return node[key] !== undefined;
}

/** A model-catalog slug (`@openai-prod`) names stored credentials, so it needs no key of its own. */
function isProviderSlug(provider: string | undefined): boolean {
  return provider !== undefined && provider.startsWith('@');
}

function checkCombination(node: GatewayConfig, path: string, options: ConfigRuleOptions): void {
  if (has(node, 'targets') && !has(node, 'strategy')) {
    throw fieldError('invalid_config', `${path}.strategy`, 'is required when targets is given');
  }
  if (REQUIRED_COMBINATIONS.some((keys) => keys.every((k) => has(node, k)))) return;
  if (isProviderSlug(node.provider)) return;
  // The provider's key arrives in the Authorization header; the credential rule below accepts it.
  if (has(node, 'provider') && options.authorizationPresent === true) return;
  throw fieldError('invalid_config', path, `must contain at least one of: ${COMBINATIONS_TEXT}`);
}

/** The single-provider rule: a named provider needs some way to authenticate. */
function checkCredentials(node: GatewayConfig, path: string, options: ConfigRuleOptions): void {
  if (node.provider === undefined || isProviderSlug(node.provider)) return;
  if (has(node, 'api_key') || has(node, 'virtual_key') || has(node, 'custom_host')) return;
  if (CLOUD_CREDENTIALS.some((keys) => keys.every((k) => has(node, k)))) return;
  if (options.authorizationPresent === true) return;
  const partial = CLOUD_CREDENTIALS.find((keys) => keys.some((k) => has(node, k)));
  const hint =
    partial === undefined ? '' : ` (cloud credentials are incomplete: need ${partial.join(' + ')})`;
  throw fieldError(
    'invalid_config',
    `${path}.api_key`,
    `is required when provider is given without virtual_key, custom_host or cloud credentials${hint}`,
  );
}

/** A node's Vertex AI settings: its own, else its parent's when it names no provider or virtual key of its
 * own (provider settings pass down together or not at all). */
function vertexCapacity(node: GatewayConfig, parent: VertexCapacity): VertexCapacity {
  const ownProvider = node.provider !== undefined || node.virtual_key !== undefined;
  const from = ownProvider ? {} : parent;
  return {
    cloudb_region: node.cloudb_region ?? from.cloudb_region,
    cloudb_request_type: node.cloudb_request_type ?? from.cloudb_request_type,
    cloudb_shared_request_type: node.cloudb_shared_request_type ?? from.cloudb_shared_request_type,
  };
}

/** Vertex AI's rule of `cloudb_shared_request_type` (vertex-ai-request-type.ts): a target whose settings
 * the config gives is refused with the config rather than on each call. Those a virtual key or `@slug`
 * holds are judged with the node's when a config is stored (named-documents.ts), else when the call is made. */
function checkVertexSharedRequestType(capacity: VertexCapacity, path: string): void {
  const refusal = sharedRequestTypeRefusal(capacity);
  if (refusal !== undefined) {
    throw fieldError('invalid_config', `${path}.cloudb_shared_request_type`, refusal.reason);
  }
}

function checkCustomHost(node: GatewayConfig, path: string): void {
  if (node.custom_host === undefined) return;
  let url: URL;
  try {
    url = new URL(node.custom_host);
  } catch {
    throw fieldError('invalid_config', `${path}.custom_host`, 'must be an http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw fieldError('invalid_config', `${path}.custom_host`, 'must be an http or https URL');
  }
}

/**
 * Headers `forward_headers` cannot pass on: the connection's own (hop-by-hop) and the framing of a body
 * the gateway writes itself (the client's Content-Length does not fit it, and the
 * provider call fails).
 */
const UNFORWARDABLE: ReadonlySet<string> = new Set([...HOP_BY_HOP, 'expect']);

/** Neither those nor the gateway's own `x-gateway-*` headers, which carry the caller's gateway key. */
function checkForwardHeaders(node: GatewayConfig, path: string): void {
  node.forward_headers?.forEach((name, i) => {
    const lower = name.toLowerCase();
    if (UNFORWARDABLE.has(lower)) {
      throw fieldError(
        'invalid_config',
        `${path}.forward_headers[${i}]`,
        `cannot be ${lower}: it belongs to the client's connection and body, not to the call to the provider`,
      );
    }
    if (lower.startsWith('x-gateway-')) {
      throw fieldError(
        'invalid_config',
        `${path}.forward_headers[${i}]`,
        "cannot be an x-gateway-* header: those are the gateway's own (the caller's gateway key among them)",
      );
    }
  });
}

/** The two spellings of the Retry-After setting (the reference gateway's and the interface's) may not
 * disagree: either would be a guess. */
function checkRetry(node: GatewayConfig, path: string): void {
  const retry = node.retry;
  if (retry?.use_retry_after_header === undefined || retry.use_retry_after_headers === undefined) return;
  if (retry.use_retry_after_header !== retry.use_retry_after_headers) {
    throw fieldError(
      'invalid_config',
      `${path}.retry.use_retry_after_header`,
      'disagrees with use_retry_after_headers, its other spelling: give one',
    );
  }
}

/** The semantic cache's keys mean nothing to the simple cache: set there, they are a mistake. */
function checkCache(node: GatewayConfig, path: string): void {
  const cache = node.cache;
  if (cache === undefined || cache.mode === 'semantic') return;
  for (const key of ['similarity_threshold', 'embedding'] as const) {
    if (cache[key] !== undefined) {
      throw fieldError('invalid_config', `${path}.cache.${key}`, "is only read with cache.mode 'semantic'");
    }
  }
}

function checkStrategy(node: GatewayConfig, path: string, options: ConfigRuleOptions): void {
  const strategy = node.strategy;
  if (strategy === undefined) return;
  const targets = node.targets ?? [];
  const mode = strategy.mode;

  if ((mode === 'loadbalance' || mode === 'fallback' || mode === 'conditional') && targets.length === 0) {
    throw fieldError('invalid_config', `${path}.targets`, `is required when strategy.mode is '${mode}'`);
  }
  // Routing to "the first of several" would silently ignore the rest; refuse instead.
  if (mode === 'single' && targets.length > 1) {
    throw fieldError(
      'invalid_config',
      `${path}.targets`,
      "must have at most 1 item when strategy.mode is 'single'",
    );
  }
  // All weights 0 leaves nothing to draw: refused with the config, not when a fallback first reaches it.
  if (mode === 'loadbalance' && !weightsOf(targets).some((w) => w > 0)) {
    throw fieldError(
      'invalid_config',
      `${path}.targets`,
      'has no target with a positive weight: give at least one a weight above 0',
    );
  }
  if (mode !== 'conditional') {
    // Only a conditional node reads them: on another they would be a routing rule silently not applied.
    for (const key of ['conditions', 'default'] as const) {
      if (strategy[key] !== undefined && options.asStored !== true) {
        throw fieldError(
          'invalid_config',
          `${path}.strategy.${key}`,
          `is read only when strategy.mode is 'conditional' (this node's is '${mode}'): remove it, or make the node conditional`,
        );
      }
    }
    return;
  }

  if (strategy.conditions === undefined) {
    throw fieldError(
      'invalid_config',
      `${path}.strategy.conditions`,
      "is required when strategy.mode is 'conditional'",
    );
  }
  if (strategy.default === undefined) {
    throw fieldError(
      'invalid_config',
      `${path}.strategy.default`,
      "is required when strategy.mode is 'conditional'",
    );
  }
  const names = new Set<string>();
  targets.forEach((target, i) => {
    if (target.name === undefined) return;
    if (names.has(target.name)) {
      throw fieldError(
        'invalid_config',
        `${path}.targets[${i}].name`,
        `'${target.name}' is used by another target`,
      );
    }
    names.add(target.name);
  });
  const known = names.size > 0 ? [...names].map((n) => `'${n}'`).join(', ') : 'none';
  strategy.conditions.forEach((condition, i) => {
    validateConditionQuery(condition.query, `${path}.strategy.conditions[${i}].query`);
    if (!names.has(condition.then)) {
      throw fieldError(
        'invalid_config',
        `${path}.strategy.conditions[${i}].then`,
        `must be the name of one of the targets (got '${condition.then}'; target names: ${known})`,
      );
    }
  });
  if (!names.has(strategy.default)) {
    throw fieldError(
      'invalid_config',
      `${path}.strategy.default`,
      `must be the name of one of the targets (got '${strategy.default}'; target names: ${known})`,
    );
  }
}
