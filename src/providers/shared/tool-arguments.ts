import { GatewayError } from '../../core/errors.js';

/**
 * Parses the `arguments` string of an assistant tool call from the history into the object providers
 * want back. An empty string means no arguments; anything else must be a JSON object.
 */
export function parseToolArguments(args: string | undefined, param: string): Record<string, unknown> {
  if (args === undefined || args.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    throw new GatewayError('invalid_body', `${param} is not valid JSON`, { param });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new GatewayError('invalid_body', `${param} must be a JSON object`, { param });
  }
  return value as Record<string, unknown>;
}
