/**
 * Vertex AI credentials: a service-account access token obtained with google-auth-library (OAuth2
 * JWT-bearer grant), cached per service account until shortly before it expires, or a bearer token given
 * as `api_key`. The only module of the adapter that does I/O.
 */
import { createHash, createPrivateKey } from 'node:crypto';
import type { AbortSignalLike } from '../../core/abort.js';
import { GatewayError, ProviderError } from '../../core/errors.js';
import type { AuthMaterial, ProviderTarget } from '../types.js';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** The endpoint google-auth-library posts to, whatever the credentials say; rewritten to `token_uri`. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const PROVIDER = 'vertex-ai';
/** A token is replaced this long before it expires (or half its life, when that is shorter). */
const REFRESH_MARGIN_MS = 5 * 60 * 1000;
/** How long one token exchange may take before it fails, whoever is waiting for it. */
const EXCHANGE_TIMEOUT_MS = 30_000;
/** The most of the token endpoint's answer read (a token answer is a few hundred bytes): google-auth-library
 * reads it whole, and `token_uri` may name any host. */
const MAX_TOKEN_ANSWER_BYTES = 1024 * 1024;

interface ServiceAccount {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri?: string;
}

interface CachedToken {
  accessToken: string;
  refreshAt: number;
}

const tokens = new Map<string, CachedToken>();
const inFlight = new Map<string, Promise<CachedToken>>();

export async function authenticateVertex(
  target: ProviderTarget,
  signal: AbortSignalLike,
): Promise<AuthMaterial> {
  const json = target.cloudb_service_account_json;
  if (json === undefined) {
    if (target.api_key) return { accessToken: target.api_key };
    // A custom_host (a proxy, a private endpoint) may need no credentials: the call goes without them.
    if (target.custom_host) return {};
    throw new GatewayError(
      'provider_config_error',
      'vertex-ai needs cloudb_service_account_json or an access token in api_key',
      { param: 'cloudb_service_account_json' },
    );
  }
  const account = readServiceAccount(json);
  const key = cacheKey(account);
  const cached = tokens.get(key);
  if (cached && cached.refreshAt > Date.now()) return { accessToken: cached.accessToken };

  let exchange = inFlight.get(key);
  if (!exchange) {
    const started: Promise<CachedToken> = exchangeToken(account).finally(() => {
      if (inFlight.get(key) === started) inFlight.delete(key);
    });
    exchange = started;
    inFlight.set(key, exchange);
  }
  const shared = exchange;
  // A caller that gives up on a slow exchange takes it out of the way: the next request starts its own
  // rather than joining one that may never answer (the one left runs out at its own timeout).
  const token = await abortable(shared, signal, () => {
    if (inFlight.get(key) === shared) inFlight.delete(key);
  });
  tokens.set(key, token);
  return { accessToken: token.accessToken };
}

/** Forgets every cached token (tests, key rotation). */
export function clearVertexTokenCache(): void {
  tokens.clear();
}

function readServiceAccount(json: Record<string, unknown>): ServiceAccount {
  const { client_email, private_key, private_key_id, token_uri } = json;
  const missing = [
    typeof client_email === 'string' && client_email ? undefined : 'client_email',
    typeof private_key === 'string' && private_key ? undefined : 'private_key',
  ].filter(Boolean);
  if (missing.length > 0) {
    throw new GatewayError(
      'provider_config_error',
      `cloudb_service_account_json lacks ${missing.join(' and ')}`,
      { param: 'cloudb_service_account_json' },
    );
  }
  try {
    createPrivateKey(private_key as string);
  } catch {
    throw new GatewayError(
      'provider_config_error',
      'cloudb_service_account_json.private_key is not a readable PEM private key',
      { param: 'cloudb_service_account_json' },
    );
  }
  if (token_uri !== undefined && (typeof token_uri !== 'string' || !/^https?:\/\//.test(token_uri))) {
    throw new GatewayError(
      'provider_config_error',
      'cloudb_service_account_json.token_uri must be an http(s) URL',
      {
        param: 'cloudb_service_account_json',
      },
    );
  }
  const account: ServiceAccount = {
    client_email: client_email as string,
    private_key: private_key as string,
  };
  if (typeof private_key_id === 'string') account.private_key_id = private_key_id;
  if (typeof token_uri === 'string') account.token_uri = token_uri;
  return account;
}

function cacheKey(account: ServiceAccount): string {
  const keyHash = createHash('sha256').update(account.private_key).digest('hex').slice(0, 16);
  return `${account.client_email}|${account.token_uri ?? GOOGLE_TOKEN_URL}|${keyHash}`;
}

async function exchangeToken(account: ServiceAccount): Promise<CachedToken> {
  // Loaded on the first token exchange, not at start: most gateways never call Vertex with a service account.
  const { JWT } = await import('google-auth-library');
  const client = new JWT({
    email: account.client_email,
    key: account.private_key,
    ...(account.private_key_id ? { keyId: account.private_key_id } : {}),
    scopes: [CLOUD_PLATFORM_SCOPE],
    // It sets no timeout nor bound of its own: an endpoint that never answers would hold the exchange
    // forever, and one that never stops would be read into memory until the timeout. `maxContentLength`
    // refuses a Content-Length past the bound; `size` (node-fetch's, which gaxios uses on Node; gaxios
    // passes its own `maxContentLength` on as `size` only when given per request) bounds the bytes as they
    // come, destroying the answer's stream past it, which closes its connection.
    transporterOptions: {
      timeout: EXCHANGE_TIMEOUT_MS,
      maxContentLength: MAX_TOKEN_ANSWER_BYTES,
      size: MAX_TOKEN_ANSWER_BYTES,
    },
  });
  const tokenUri = account.token_uri;
  if (tokenUri && tokenUri !== GOOGLE_TOKEN_URL) {
    // google-auth-library posts service-account grants to Google's fixed endpoint; the credentials'
    // own token_uri (a private or test endpoint) is honoured by redirecting that one request.
    client.transporter.interceptors.request.add({
      resolved: async (options) => {
        if (options.url.toString() === GOOGLE_TOKEN_URL) options.url = new URL(tokenUri);
        return options;
      },
    });
  }
  const started = Date.now();
  let credentials;
  try {
    credentials = await client.authorize();
  } catch (error) {
    throw tokenError(error);
  }
  if (!credentials.access_token) {
    throw new ProviderError({
      status: 401,
      provider: PROVIDER,
      type: 'authentication_error',
      code: 'token_exchange_failed',
      message: 'vertex-ai token endpoint answered without an access_token',
    });
  }
  const expiresAt = credentials.expiry_date ?? started + 3600 * 1000;
  const lifetime = Math.max(0, expiresAt - started);
  return {
    accessToken: credentials.access_token,
    refreshAt: expiresAt - Math.min(REFRESH_MARGIN_MS, lifetime / 2),
  };
}

/**
 * A refusal by the token endpoint (bad key, unknown account: 4xx) is an authentication failure of the
 * credentials, reported as 401; an endpoint that cannot be reached or fails (5xx) is an upstream failure.
 */
function tokenError(error: unknown): ProviderError {
  const status = (error as { response?: { status?: number } }).response?.status;
  const detail = error instanceof Error ? error.message : String(error);
  if (status !== undefined && status < 500) {
    return new ProviderError({
      status: 401,
      provider: PROVIDER,
      type: 'authentication_error',
      code: 'token_exchange_refused',
      message: `vertex-ai token endpoint refused the service account (HTTP ${status}): ${detail}`,
    });
  }
  return new ProviderError({
    status: 502,
    provider: PROVIDER,
    code: 'token_exchange_failed',
    message: `vertex-ai token endpoint could not be used: ${detail}`,
  });
}

/** Waits for `promise` until `signal` aborts, when `onAbort` runs and the wait ends with the signal's reason. */
function abortable<T>(promise: Promise<T>, signal: AbortSignalLike, onAbort: () => void): Promise<T> {
  if (signal.aborted) {
    onAbort();
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const aborted = (): void => {
      onAbort();
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', aborted, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', aborted);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', aborted);
        reject(error as Error);
      },
    );
  });
}
