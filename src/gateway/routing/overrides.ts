/** A node's `override_params`: merged over the client's body, and checked by the same rules as a body. */
import { GatewayError } from '../../core/errors.js';
import type { EndpointKind, ModelRequest } from '../../providers/types.js';
import type { TargetConfig } from '../config/index.js';
import { ENDPOINTS, validateRequest } from '../endpoints.js';
import type { RoutedRequest } from './route-types.js';

/** Every field some model endpoint's schema names. */
const MODEL_FIELDS: ReadonlySet<string> = new Set(
  Object.values(ENDPOINTS).flatMap((endpoint) => [...endpoint.fields]),
);

/**
 * The overrides an endpoint is sent: a config shared by chat and embeddings calls sets chat's parameters
 * (temperature, max_tokens), which a provider's embeddings API refuses. A parameter of another endpoint
 * only is left out, as Portkey leaves it; one no endpoint names (a provider's own, `top_k`) is kept.
 */
function overridesFor(endpoint: EndpointKind, overrides: Record<string, unknown>): Record<string, unknown> {
  const own = ENDPOINTS[endpoint].fields;
  let kept: Record<string, unknown> | undefined;
  for (const key in overrides) {
    if (own.has(key) || !MODEL_FIELDS.has(key)) continue;
    kept ??= { ...overrides };
    delete kept[key];
  }
  return kept ?? overrides;
}

/**
 * The request with the node's override_params set over its body. Checked by the body's schema where a
 * target's request is made (overriddenRequest); a continuation of it, whose body differs only in its
 * messages or prompt, takes them unchecked.
 */
export function withOverrides<K extends EndpointKind>(
  { endpoint, body }: ModelRequest<K>,
  node: TargetConfig,
): ModelRequest<K> {
  const overrides = node.override_params;
  return { endpoint, body: overrides ? { ...body, ...overridesFor(endpoint, overrides) } : body };
}

/**
 * The request a target is sent: the client's with the node's override_params applied, checked by the same
 * rules as a body. A bad override is reported where it is in the config. An override of undefined, which
 * no config's JSON holds, removes the field: a prompt_id target is sent its own prompt's fields only
 * (gateway/prompts/prompt-targets.ts).
 */
export function overriddenRequest(request: RoutedRequest, node: TargetConfig, path: string): RoutedRequest {
  // A pass-through body is the provider's own, sent as it came: override_params are for model calls.
  if (!node.override_params || request.endpoint === 'passthrough') return request;
  const merged: Record<string, unknown> = {
    ...request.body,
    ...overridesFor(request.endpoint, node.override_params),
  };
  for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key];
  try {
    return validateRequest(ENDPOINTS[request.endpoint], merged);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    const where = `config.${path ? `${path}.` : ''}override_params`;
    throw new GatewayError('invalid_config', `${where}: ${err.message}`, {
      param: err.param ? `${where}.${err.param}` : where,
    });
  }
}
