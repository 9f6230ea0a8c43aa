/**
 * Azure authentication, shared by Azure OpenAI and Azure AI model inference: an API key goes in the
 * `api-key` header; a Microsoft Entra ID token goes in `Authorization` — an `api_key` written
 * `Bearer <token>`, or one that is a token itself (a JWT: what a client sends as `Authorization: Bearer`
 * when it signs in to Azure with Entra ID, which `api-key` would not take).
 */
import { GatewayError } from '../../core/errors.js';
import type { AuthMaterial, ProviderTarget } from '../types.js';

export type AzureKeyStyle = 'api-key' | 'bearer';

export function azureAuthHeaders(
  target: ProviderTarget,
  auth: AuthMaterial | undefined,
  keyStyle: AzureKeyStyle = 'api-key',
): Record<string, string> {
  if (auth?.accessToken) return { authorization: `Bearer ${auth.accessToken}` };
  const key = target.api_key;
  if (!key) {
    if (target.custom_host) return {};
    throw new GatewayError(
      'provider_config_error',
      'Azure needs an `api_key` (a key, or `Bearer <token>`).',
      {
        param: 'api_key',
      },
    );
  }
  if (/^bearer\s/i.test(key)) return { authorization: `Bearer ${key.replace(/^bearer\s+/i, '')}` };
  return keyStyle === 'bearer' || JWT.test(key) ? { authorization: `Bearer ${key}` } : { 'api-key': key };
}

/** A JSON Web Token: three base64url parts, the first a JSON header (`{"` is `eyJ`). Azure keys have no dots. */
const JWT = /^eyJ[\w-]*\.[\w-]+\.[\w-]*$/;

/**
 * The headers of a passthrough call: the client's own credentials and `host` are dropped (the body goes
 * as the client sent it, with its length), and the target's Azure credentials take their place.
 */
export function azurePassthroughHeaders(
  incoming: Record<string, string>,
  target: ProviderTarget,
  auth: AuthMaterial | undefined,
  keyStyle: AzureKeyStyle = 'api-key',
): Record<string, string> {
  const headers: Record<string, string> = { ...incoming };
  delete headers.authorization;
  delete headers['api-key'];
  delete headers.host;
  return Object.assign(headers, azureAuthHeaders(target, auth, keyStyle));
}
