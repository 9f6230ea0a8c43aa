/**
 * `extra_headers` (a prompt version's `parameters.extra_headers`, the `override_params.extra_headers` of a
 * config node, stored or inline) must be an object of header names and values: given as text (a JSON
 * object written as a string) or as an array of pairs, its header names are no keys, so a credential
 * among them could not be told from the other headers' values nor shown `[REDACTED]` (views.ts). Such a
 * value is refused when stored; one stored before is shown `[REDACTED]` whole and counted as holding a
 * secret (secret-dependents.ts).
 */
import { GatewayError } from '../../../core/errors.js';
import { childPath, configParam } from '../../../gateway/routing/inherit.js';
import { REDACTED } from '../../../observability/redact.js';
import { isObject, type Json } from './json.js';

/** Whether `headers` is given, and as something other than an object of header names and values. */
export function misshapenHeaders(headers: unknown): boolean {
  return headers !== undefined && headers !== null && !isObject(headers);
}

/** Whether misshapen `headers` hold anything: not empty, nor shown `[REDACTED]` already. */
export function misshapenHeadersHold(headers: unknown): boolean {
  if (!misshapenHeaders(headers)) return false;
  if (Array.isArray(headers)) return headers.length > 0;
  return headers !== '' && headers !== REDACTED;
}

/** Where in `config` (a config, or a node of one, at `path`) a node's `override_params.extra_headers` is
 * misshapen; undefined when none is. */
function misshapenConfigHeaders(config: unknown, path = ''): string | undefined {
  if (!isObject(config)) return undefined;
  const overrides = config.override_params;
  if (isObject(overrides) && misshapenHeaders(overrides.extra_headers))
    return configParam(path, 'override_params.extra_headers');
  if (!Array.isArray(config.targets)) return undefined;
  for (const [i, target] of config.targets.entries()) {
    const found = misshapenConfigHeaders(target, childPath(path, i));
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Refuses (400 `invalid_body`, naming the place) misshapen `extra_headers` in `parameters` (a prompt
 * version's) or in a node of `config` (stored or inline); never echoes them. */
export function refuseMisshapenHeaders(given: { parameters?: unknown; config?: unknown }): void {
  const param =
    isObject(given.parameters) && misshapenHeaders(given.parameters.extra_headers)
      ? 'parameters.extra_headers'
      : misshapenConfigHeaders(given.config);
  if (param === undefined) return;
  throw new GatewayError('invalid_body', `${param} must be an object of header names and values`, {
    param,
  });
}

/** `fields` with misshapen `extra_headers` shown `[REDACTED]` whole. */
export function headersShown(fields: unknown): unknown {
  if (!isObject(fields) || !misshapenHeaders(fields.extra_headers)) return fields;
  return { ...fields, extra_headers: REDACTED };
}

/** A config (stored or inline) with each node's misshapen `override_params.extra_headers` shown
 * `[REDACTED]` whole. */
export function configHeadersShown(node: unknown): unknown {
  if (!isObject(node)) return node;
  const shown: Json = { ...node };
  if (node.override_params !== undefined) shown.override_params = headersShown(node.override_params);
  if (Array.isArray(node.targets)) shown.targets = node.targets.map(configHeadersShown);
  return shown;
}
