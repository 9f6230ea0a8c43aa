/**
 * `default.jwt` {jwksUri, headerKey, cacheMaxAge, clockTolerance, maxTokenAge, algorithms}, the reference
 * gateway's parameters: passes when the request header `headerKey` (Authorization by default; a `Bearer ` prefix is
 * dropped) holds a JWT whose signature a key of the JSON Web Key Set at `jwksUri` verifies and whose `exp`,
 * `nbf` and `iat` hold (within `clockTolerance`, 5 s by default; `iat` no older than `maxTokenAge`, 1 day by
 * default), signed with one of `algorithms` when it is given (else any the key is for; never `none`). jose
 * verifies; nothing here is cryptography.
 *
 * The key set is fetched through the engine's guarded `getJson` (custom-host address policy, no redirects
 * followed, the answer bounded) and kept per URI for `cacheMaxAge` seconds (a day by default), in a bounded
 * cache. A token whose key id the set lacks fetches it again, at most once per cooldown, for keys rotated
 * since. A set that cannot be had (refused address, network error, a status other than 200, an answer that is
 * not a key set) is an error, which the hook's `on_error` decides; a token that does not verify is a fail.
 */
import { Type } from '@sinclair/typebox';
import {
  createLocalJWKSet,
  errors,
  jwtVerify,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from 'jose';
import { LRUCache } from 'lru-cache';
import { defineCheck } from '../built-in-check.js';
import type { CheckContext, CheckServices } from '../check-types.js';
import { HttpUrlSchema, outboundRuleBreak } from './outbound-call.js';

/** jose's durations: a number of seconds, or `30s`, `5 minutes`, `2h`, `1d`, `1w`, `1y` … */
const DURATION =
  '^\\d+(\\.\\d+)? ?(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w|years?|yrs?|y)$';
const DurationSchema = Type.Union([Type.Number({ minimum: 0 }), Type.String({ pattern: DURATION })]);

/** The asymmetric JWS algorithms jose verifies. A key set is public, so a symmetric (HS*) key in one would
 * let anyone sign: those are refused with the config. */
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/** RFC 9110's token: what a header name may hold. */
const HEADER_NAME = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";

const DEFAULT_CACHE_MAX_AGE_S = 86_400;
const DEFAULT_CLOCK_TOLERANCE_S = 5;
const DEFAULT_MAX_TOKEN_AGE = '1d';
/** A key id the set lacks fetches it again only when it is older than this (jose's own default). */
const COOLDOWN_MS = 30_000;
/** How long a fetch of a set may take, whoever waits for it; each check also stops at its own timeout. */
const FETCH_TIMEOUT_MS = 10_000;

type KeySet = ReturnType<typeof createLocalJWKSet>;

interface CachedSet {
  keys: KeySet;
  fetchedAt: number;
}

/** Key sets by URI; few are configured, so a bound stops only a config that names a new one per call. */
const cache = new LRUCache<string, CachedSet>({ max: 100 });
/** Fetches under way, by URI: concurrent checks of a cold cache share one. */
const fetching = new Map<string, Promise<CachedSet>>();

/** A key set that could not be had: the check errs, rather than fail the token. */
class KeySetUnavailable extends Error {}

export const jwt = defineCheck({
  id: 'jwt',
  events: ['beforeRequestHook'],
  parameters: Type.Object(
    {
      jwksUri: HttpUrlSchema,
      headerKey: Type.Optional(Type.String({ pattern: HEADER_NAME })),
      cacheMaxAge: Type.Optional(Type.Number({ minimum: 0 })),
      clockTolerance: Type.Optional(DurationSchema),
      maxTokenAge: Type.Optional(DurationSchema),
      algorithms: Type.Optional(
        Type.Array(Type.Union(ALGORITHMS.map((alg) => Type.Literal(alg))), { minItems: 1 }),
      ),
    },
    { additionalProperties: false },
  ),
  refine: (p) => outboundRuleBreak('jwksUri', p.jwksUri, undefined),
  async run(ctx, p, services) {
    const header = headerValue(ctx, p.headerKey ?? 'Authorization');
    if (header === undefined || header.trim() === '') {
      return { verdict: false, explanation: 'Missing authorization header' };
    }
    const token = header.replace(/^Bearer\s+/i, '').trim();
    const maxAgeMs = (p.cacheMaxAge ?? DEFAULT_CACHE_MAX_AGE_S) * 1000;
    let set = await keySet(p.jwksUri, maxAgeMs, services, ctx.signal);
    const getKey = async (protectedHeader: JWSHeaderParameters, input: FlattenedJWSInput) => {
      try {
        return await set.keys(protectedHeader, input);
      } catch (err) {
        if (!(err instanceof errors.JWKSNoMatchingKey) || Date.now() - set.fetchedAt < COOLDOWN_MS) throw err;
        set = await keySet(p.jwksUri, 0, services, ctx.signal);
        return set.keys(protectedHeader, input);
      }
    };
    try {
      await jwtVerify(token, getKey, {
        clockTolerance: p.clockTolerance ?? DEFAULT_CLOCK_TOLERANCE_S,
        maxTokenAge: p.maxTokenAge ?? DEFAULT_MAX_TOKEN_AGE,
        ...(p.algorithms !== undefined && { algorithms: p.algorithms }),
      });
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey) {
        return { verdict: false, explanation: 'No matching key found for kid' };
      }
      if (err instanceof errors.JOSEError) {
        return { verdict: false, explanation: `JWT validation error: ${err.message}` };
      }
      throw err;
    }
    return { verdict: true, explanation: 'JWT token validation succeeded' };
  },
});

function headerValue(ctx: CheckContext, name: string): string | undefined {
  const value = ctx.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** The set at `uri`, from the cache when fetched less than `maxAgeMs` ago, else fetched. */
async function keySet(
  uri: string,
  maxAgeMs: number,
  services: CheckServices,
  signal: AbortSignal,
): Promise<CachedSet> {
  const cached = cache.get(uri);
  if (cached !== undefined && Date.now() - cached.fetchedAt < maxAgeMs) return cached;
  let pending = fetching.get(uri);
  if (pending === undefined) {
    pending = fetchKeySet(uri, services).finally(() => fetching.delete(uri));
    fetching.set(uri, pending);
  }
  return untilAborted(pending, signal);
}

async function fetchKeySet(uri: string, services: CheckServices): Promise<CachedSet> {
  const url = new URL(uri);
  // The query string or fragment may carry a token.
  const shown = `${url.origin}${url.pathname}`;
  const answer = await services.getJson(uri, AbortSignal.timeout(FETCH_TIMEOUT_MS), 'jwksUri');
  if (answer.status !== 200) {
    throw new KeySetUnavailable(`The JWKS at ${shown} answered with status ${answer.status}`);
  }
  let keys: KeySet;
  try {
    keys = createLocalJWKSet(answer.body as JSONWebKeySet);
  } catch {
    throw new KeySetUnavailable(`The JWKS at ${shown} answered with something other than a JSON Web Key Set`);
  }
  const set = { keys, fetchedAt: Date.now() };
  cache.set(uri, set);
  return set;
}

/** `promise`, or the abort of `signal` (the check's timeout) if that comes first. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
