import { GatewayError } from '../../core/errors.js';
import type { AdapterRequest, ProviderTarget } from '../types.js';

/** The bearer token of a Vertex call: the exchanged service-account token, else an access token given as
 * api_key; none behind a custom_host (which may need no auth); otherwise a 400 naming the key to set. */
export function vertexBearer(req: {
  target: ProviderTarget;
  auth?: AdapterRequest['auth'];
}): Record<string, string> {
  const token =
    req.auth?.accessToken ?? (req.target.cloudb_service_account_json ? undefined : req.target.api_key);
  if (token) return { authorization: `Bearer ${token}` };
  if (req.target.custom_host) return {};
  throw new GatewayError(
    'provider_config_error',
    'vertex-ai needs cloudb_service_account_json or an access token in api_key',
    { param: 'cloudb_service_account_json' },
  );
}
