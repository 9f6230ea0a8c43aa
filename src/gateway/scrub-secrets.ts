/**
 * Providers sometimes quote the credential they were sent in their error messages ("Incorrect API key
 * provided: sk-…"), or in a header of their answer. Before such a message reaches a client, a log line or
 * a record, every credential of the target is cut out of it.
 */
import type { AuthMaterial, ProviderTarget } from '../providers/types.js';
import type { GatewayError, ProviderError } from '../core/errors.js';
import { maskSecrets, secretValues } from '../core/mask-secrets.js';

export function targetSecrets(target: ProviderTarget, auth?: AuthMaterial): string[] {
  return secretValues([
    target.api_key,
    target.api_key?.replace(/^Bearer\s+/i, ''),
    target.cloudc_access_key_id,
    target.cloudc_secret_access_key,
    target.cloudc_session_token,
    auth?.accessToken,
    target.cloudb_service_account_json?.private_key,
  ]);
}

/** `headers` with every one of `secrets` masked in their values; the same object when none holds one. */
export function scrubHeaders(headers: Record<string, string>, secrets: string[]): Record<string, string> {
  let out: Record<string, string> | undefined;
  for (const name in headers) {
    const value = headers[name];
    const scrubbed = maskSecrets(value, secrets);
    if (scrubbed === value) continue;
    out ??= { ...headers };
    out[name] = scrubbed;
  }
  return out ?? headers;
}

/** The texts of an error a client or a record sees: a provider may quote the key in any of them. */
const ERROR_TEXTS = ['message', 'param', 'code', 'type'] as const;

export function scrubSecrets<E extends GatewayError | ProviderError>(error: E, secrets: string[]): E {
  if (secrets.length === 0) return error;
  // Scrubbed in place: the error was made for this call, from the provider's answer.
  const fields = error as unknown as Record<(typeof ERROR_TEXTS)[number] | 'headers', unknown>;
  for (const key of ERROR_TEXTS) {
    const value = fields[key];
    if (typeof value !== 'string') continue;
    const scrubbed = maskSecrets(value, secrets);
    if (scrubbed !== value) fields[key] = scrubbed;
  }
  const headers = fields.headers;
  if (headers !== null && typeof headers === 'object') {
    fields.headers = scrubHeaders(headers as Record<string, string>, secrets);
  }
  return error;
}
