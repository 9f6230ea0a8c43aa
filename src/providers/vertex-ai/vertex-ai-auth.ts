/**
 * Vertex AI credentials: a service-account access token obtained with google-auth-library (OAuth2
 * JWT-bearer grant), cached per service account until shortly before it expires, or a bearer token given
 * as `api_key`. The only module of the adapter that does I/O, and that through the gateway's sender: the
 * service account's `token_uri` is an address a client may choose, held to the custom-host policy as
 * `custom_host` is (checked as written when the target is resolved, and where its name resolves to when
 * the exchange connects), and a redirect from it is not followed.
 */
import { createHash, createPrivateKey } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { AbortSignalLike } from '../../core/abort.js';
import { GatewayError, ProviderError } from '../../core/errors.js';
import { UpstreamTooLarge } from '../../core/upstream-limits.js';
import type { AuthMaterial, OwnRequestSender, ProviderTarget, UpstreamRequest } from '../types.js';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** The endpoint google-auth-library posts to, whatever the credentials say; rewritten to `token_uri`. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const PROVIDER = 'vertex-ai';
/** The most service accounts whose token is kept: a client may send a new inline one with every request,
 * and a token is only worth keeping for the accounts in use (the least recently used is dropped first). */
export const MAX_CACHED_TOKENS = 1000;
/** A token is replaced this long before it expires (or half its life, when that is shorter). */
const REFRESH_MARGIN_MS = 5 * 60 * 1000;
/** How long one token exchange may take before it fails, whoever is waiting for it: its attempts together. */
const EXCHANGE_TIMEOUT_MS = 30_000;
/** How many times an exchange is tried again after a failure of the endpoint (a 5xx, 408 or 429, or a
 * connection that failed); never after the address policy refused it, nor past EXCHANGE_TIMEOUT_MS. */
const EXCHANGE_RETRIES = 1;
/** The most of the token endpoint's answer read (a token answer is a few hundred bytes): google-auth-library
 * reads it whole, and `token_uri` may name any host. */
const MAX_TOKEN_ANSWER_BYTES = 1024 * 1024;
/** The parameter a refused `token_uri` is reported under. */
const TOKEN_URI_PARAM = 'cloudb_service_account_json.token_uri';
/** OAuth 2.0's error codes (RFC 6749 §5.2, §4.1.2.1): the only `error` of a token endpoint's answer that
 * reaches the client, with its description; any other text of the answer does not. */
const OAUTH_ERRORS: ReadonlySet<string> = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'access_denied',
  'server_error',
  'temporarily_unavailable',
]);
/** The most of an OAuth error description the client is told. */
const MAX_REASON_CHARS = 200;

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

/**
 * The tokens of the service accounts in use, each until its refreshAt (its entry's ttl), within a bound of
 * accounts (the least recently used dropped first), and the exchanges under way. The gateway keeps one
 * (MAX_CACHED_TOKENS accounts); another, of any bound, can be given to authenticateVertex.
 */
export class VertexTokenCache {
  readonly tokens: LRUCache<string, CachedToken>;
  readonly inFlight = new Map<string, Promise<CachedToken>>();

  constructor({ maxAccounts = MAX_CACHED_TOKENS }: { maxAccounts?: number } = {}) {
    this.tokens = new LRUCache<string, CachedToken>({ max: maxAccounts });
  }

  /** Forgets every token (exchanges under way are kept, and their tokens are cached when they end). */
  clear(): void {
    this.tokens.clear();
  }
}

const sharedCache = new VertexTokenCache();

export async function authenticateVertex(
  target: ProviderTarget,
  signal: AbortSignalLike,
  sender: OwnRequestSender,
  { tokens, inFlight }: VertexTokenCache = sharedCache,
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
  if (cached) return { accessToken: cached.accessToken };

  let exchange = inFlight.get(key);
  if (!exchange) {
    const started: Promise<CachedToken> = exchangeToken(account, sender).finally(() => {
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
  const ttl = token.refreshAt - Date.now();
  if (ttl > 0) tokens.set(key, token, { ttl });
  return { accessToken: token.accessToken };
}

/** Forgets every token the gateway's cache holds (tests, key rotation). */
export function clearVertexTokenCache(): void {
  sharedCache.clear();
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

async function exchangeToken(account: ServiceAccount, sender: OwnRequestSender): Promise<CachedToken> {
  // Loaded on the first token exchange, not at start: most gateways never call Vertex with a service account.
  const { JWT } = await import('google-auth-library');
  const tokenUri = account.token_uri ?? GOOGLE_TOKEN_URL;
  const deadline = AbortSignal.timeout(EXCHANGE_TIMEOUT_MS);
  const client = new JWT({
    email: account.client_email,
    key: account.private_key,
    ...(account.private_key_id ? { keyId: account.private_key_id } : {}),
    scopes: [CLOUD_PLATFORM_SCOPE],
    transporterOptions: {
      // google-auth-library asks for 3 retries of the token request (2 with no answer), each attempt with
      // its own timeout, none by default: the gateway's policy decides whether and how long instead.
      retryConfig: {
        retry: EXCHANGE_RETRIES,
        noResponseRetries: EXCHANGE_RETRIES,
        shouldRetry: (error) => worthRetrying(error, deadline),
      },
      // The attempts share one deadline: an endpoint that never answers holds the exchange no longer.
      fetchImplementation: (input, init) =>
        sendThrough(sender, tokenUri, input, {
          ...init,
          signal: init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline,
        }),
    },
  });
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

const notAborted: AbortSignalLike = new AbortController().signal;

/**
 * google-auth-library's fetch: its request goes out through the gateway's sender (the custom-host policy
 * at connect time, no redirect followed) to the service account's `token_uri` (the library posts
 * service-account grants to Google's fixed endpoint), and the answer is read whole up to its bound.
 */
async function sendThrough(
  sender: OwnRequestSender,
  tokenUri: string,
  input: string | URL | Request,
  init: RequestInit = {},
): Promise<Response> {
  const url = input instanceof Request ? input.url : input.toString();
  if (url !== GOOGLE_TOKEN_URL) throw new Error(`vertex-ai token exchange asked for ${url}`);
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, name) => (headers[name] = value));
  const body =
    init.body instanceof URLSearchParams || typeof init.body === 'string' ? String(init.body) : undefined;
  if (init.body instanceof URLSearchParams) headers['content-type'] ??= 'application/x-www-form-urlencoded';
  const request: UpstreamRequest = {
    method: (init.method ?? 'POST').toUpperCase() as UpstreamRequest['method'],
    url: tokenUri,
    headers,
    ...(body !== undefined && { body }),
  };
  const answer = await sender.send(request, init.signal ?? notAborted);
  const text = await answer.body.text(MAX_TOKEN_ANSWER_BYTES);
  const contentType = answer.headers['content-type'];
  return new Response(text === '' ? null : text, {
    status: answer.statusCode,
    headers: contentType === undefined ? {} : { 'content-type': contentType },
  });
}

/**
 * A refusal by the token endpoint (bad key, unknown account: 4xx) is an authentication failure of the
 * credentials, reported as 401; an endpoint that cannot be reached, fails (5xx) or redirects (not
 * followed: a redirect could aim the exchange at a host the policy refuses) is an upstream failure. Of the
 * endpoint's answer the client is told only an OAuth error code and its description, shortened: `token_uri`
 * may name a server whose answers are not the client's to read.
 */
function tokenError(error: unknown): GatewayError | ProviderError {
  const refused = causes(error).find(
    (cause): cause is GatewayError => cause instanceof GatewayError && cause.code === 'custom_host_refused',
  );
  if (refused) {
    return new GatewayError('custom_host_refused', `${TOKEN_URI_PARAM} refused: ${refused.message}`, {
      param: TOKEN_URI_PARAM,
    });
  }
  const tooLarge = causes(error).find((cause) => cause instanceof UpstreamTooLarge);
  if (tooLarge) {
    return new ProviderError({
      status: 502,
      provider: PROVIDER,
      code: 'token_exchange_failed',
      message: `vertex-ai token endpoint answered with a body larger than ${tooLarge.limit} bytes, the most read of a token answer`,
    });
  }
  const response = (error as { response?: { status?: number; data?: unknown } }).response;
  const status = response?.status;
  if (status === undefined) {
    const detail = error instanceof Error ? error.message : String(error);
    return new ProviderError({
      status: 502,
      provider: PROVIDER,
      code: 'token_exchange_failed',
      message: `vertex-ai token endpoint could not be used: ${detail}`,
    });
  }
  const reason = oauthReason(response?.data);
  const because = reason === undefined ? '' : `: ${reason}`;
  if (status >= 300 && status < 400) {
    return new ProviderError({
      status: 502,
      provider: PROVIDER,
      code: 'token_exchange_failed',
      message: `vertex-ai token endpoint answered HTTP ${status}, a redirect, which is not followed`,
    });
  }
  if (status < 500) {
    return new ProviderError({
      status: 401,
      provider: PROVIDER,
      type: 'authentication_error',
      code: 'token_exchange_refused',
      message: `vertex-ai token endpoint refused the service account (HTTP ${status})${because}`,
    });
  }
  return new ProviderError({
    status: 502,
    provider: PROVIDER,
    code: 'token_exchange_failed',
    message: `vertex-ai token endpoint could not be used (HTTP ${status})${because}`,
  });
}

/**
 * Whether a failed attempt of the exchange is worth another: not when the gateway itself stopped it (the
 * address policy refused the address, the answer was too large: a second attempt ends the same way, after
 * another DNS lookup), nor after a refusal of the credentials (4xx), nor once the deadline passed or the
 * retries are spent; yes after a 5xx, 408 or 429 or a connection that failed without an answer.
 */
function worthRetrying(
  error: { response?: { status?: number }; config?: { retryConfig?: { currentRetryAttempt?: number } } },
  deadline: AbortSignal,
): boolean {
  if (deadline.aborted) return false;
  if ((error.config?.retryConfig?.currentRetryAttempt ?? 0) >= EXCHANGE_RETRIES) return false;
  const ours = causes(error).some(
    (cause) => cause instanceof GatewayError || cause instanceof UpstreamTooLarge,
  );
  if (ours) return false;
  const status = error.response?.status;
  return status === undefined || status === 408 || status === 429 || status >= 500;
}

/** `error` and the errors it wraps (`cause`), outermost first. */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let cause = error; cause !== undefined && !chain.includes(cause);) {
    chain.push(cause);
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return chain;
}

/** `invalid_grant: Invalid JWT Signature.` from an OAuth error answer; undefined from any other answer. */
function oauthReason(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const { error, error_description: description } = data as Record<string, unknown>;
  if (typeof error !== 'string' || !OAUTH_ERRORS.has(error)) return undefined;
  if (typeof description !== 'string') return error;
  const printable = description
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim()
    .slice(0, MAX_REASON_CHARS);
  return printable ? `${error}: ${printable}` : error;
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
