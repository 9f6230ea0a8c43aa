/** A node's `override_params`: merged over the client's body, and checked by the same rules as a body. */
import { GatewayError } from '../../core/errors.js';
import type { EndpointKind } from '../../providers/types.js';
import type { TargetConfig } from '../config/index.js';
import { ENDPOINTS } from '../endpoints.js';

export function applyOverrides(body: Record<string, unknown>, node: TargetConfig): Record<string, unknown> {
  const overrides = node.override_params as Record<string, unknown> | undefined;
  return overrides ? { ...body, ...overrides } : body;
}

/**
 * The body a target is sent: the client's with the node's override_params applied. A bad override is
 * reported where it is in the config.
 */
export function overriddenBody(
  body: Record<string, unknown>,
  node: TargetConfig,
  endpoint: EndpointKind | 'passthrough',
  path: string,
): Record<string, unknown> {
  // A pass-through body is the provider's own, sent as it came: override_params are for model calls.
  if (!node.override_params || endpoint === 'passthrough') return body;
  const merged = applyOverrides(body, node);
  try {
    ENDPOINTS[endpoint].validate(merged);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    const where = `config.${path ? `${path}.` : ''}override_params`;
    throw new GatewayError('invalid_config', `${where}: ${err.message}`, {
      param: err.param ? `${where}.${err.param}` : where,
    });
  }
  return merged;
}
