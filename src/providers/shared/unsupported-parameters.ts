import { GatewayError } from '../../core/errors.js';

/**
 * Refuses the OpenAI parameters a provider cannot honour. A parameter set to its neutral value (the one
 * that changes nothing, e.g. `frequency_penalty: 0`) is accepted, since honouring it is doing nothing.
 */
export function refuseUnsupportedParameters(
  body: Record<string, unknown>,
  unsupported: readonly string[],
  providerName: string,
): void {
  for (const name of unsupported) {
    const value = body[name];
    if (value === undefined || value === null || isNeutral(value)) continue;
    throw new GatewayError('unsupported_parameter', `${name} is not supported by ${providerName}`, {
      param: name,
    });
  }
}

function isNeutral(value: unknown): boolean {
  if (value === 0 || value === false) return true;
  if (typeof value === 'object' && value !== null && Object.keys(value).length === 0) return true;
  return false;
}
