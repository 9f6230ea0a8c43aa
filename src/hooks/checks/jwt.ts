/**
 * `default.jwt` {jwks, jwksUri, introspectEndpoint, headerKey, cacheMaxAge, clockTolerance, maxTokenAge,
 * algorithms, requiredClaims, claimValues, headerPayloadMatch, extractClaims, claimPrefix, …}, the
 * reference gateway's parameters: passes when the request header `headerKey` (Authorization by default; a
 * `Bearer ` prefix is dropped) holds a JWT whose signature a key of the inline JSON Web Key Set `jwks` or of
 * the one at `jwksUri` verifies (chosen by the token's `kid`, each such key tried; one `jwks` lacks is
 * looked for at `jwksUri`), whose `exp` and `nbf` hold within `clockTolerance` (5 s by default), whose
 * `iat`, when it has one, is no older than `maxTokenAge` (1 day by default), signed with one of
 * `algorithms` (RS256 alone by default, as the reference's; never `none` nor HS*), and whose claims then
 * pass the rules of jwt-claims.ts. jose verifies; nothing here is cryptography.
 *
 * The key set at `jwksUri` is fetched through the engine's guarded `getJson` (custom-host address policy,
 * no redirects followed, the answer bounded) and kept per URI for `cacheMaxAge` seconds (a day by default),
 * in a bounded cache. A token whose key id the set lacks fetches it again, at most once per cooldown, for
 * keys rotated since (tokens that come while a fetch is under way wait for it); when that fetch fails, the
 * token fails for want of its key. A set kept longer than `cacheMaxAge` is fetched again, and when that
 * fetch has not ended shortly before the check's deadline the token is judged by the set kept. A set that
 * cannot be had (refused address, network error, a status
 * other than 200, an answer that is not a key set) is an error, which the hook's `on_error` decides; a
 * token that does not verify (a key that cannot be used verifies nothing), or whose claims break a rule,
 * is a fail: nothing a token holds makes the check err. With `introspectEndpoint` (and
 * `introspectContentType`, `introspectCacheMaxAge`), the endpoint is asked instead of any key set
 * (jwt-introspect.ts), and the claims it answers are judged. The claims
 * `extractClaims` names, of a token that passed, are given in the result's `data.extractedClaims` under the
 * reference's header names (`claimPrefix`, `x-jwt-` by default, and the claim's name); they are not sent on
 * to the provider (jwt-extract-claims.ts).
 */
import { createPublicKey, type JsonWebKey as NodeJwk } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type CryptoKey,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
  type JWTPayload,
  type JWTVerifyOptions,
  type JWTVerifyResult,
} from 'jose';
import { LRUCache } from 'lru-cache';
import { defineCheck } from '../built-in-check.js';
import type { CheckContext, CheckServices, CheckVerdict } from '../check-types.js';
import { claimValuesRuleBreak, ClaimValuesSchema, judgeClaims, type ClaimRules } from './jwt-claims.js';
import { DEFAULT_CLAIM_PREFIX, extractClaims } from './jwt-extract-claims.js';
import { introspect } from './jwt-introspect.js';
import { HttpUrlSchema, outboundRuleBreak } from './outbound-call.js';

/** jose's durations: a number of seconds, or `30s`, `5 minutes`, `2h`, `1d`, `1w`, `1y` … */
const DURATION =
  '^\\d+(\\.\\d+)? ?(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w|years?|yrs?|y)$';
const DurationSchema = Type.Union([Type.Number({ minimum: 0 }), Type.String({ pattern: DURATION })]);

/** The asymmetric JWS algorithms jose verifies, those `algorithms` may list. A key set is public, so a
 * symmetric (HS*) key in one would let anyone sign: those are refused with the config, as is `none`. */
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

/** Without `algorithms` (or with an empty list), the reference gateway's default. */
const DEFAULT_ALGORITHMS = ['RS256'];

/** RFC 9110's token: what a header name may hold. */
const HEADER_NAME = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";

const DEFAULT_CACHE_MAX_AGE_S = 86_400;
const DEFAULT_CLOCK_TOLERANCE_S = 5;
const DEFAULT_MAX_TOKEN_AGE = '1d';
/** A key id the set lacks fetches it again only when the last fetch of it ended, whether it brought a set or
 * failed, longer ago than this (jose's own default). */
const COOLDOWN_MS = 30_000;
/** How long a fetch of a set may take, whoever waits for it; each check also stops at its own timeout. */
const FETCH_TIMEOUT_MS = 10_000;
/** How long before its deadline a token whose key id the set lacks stops waiting for the set fetched again,
 * to give its verdict in time (at most a tenth of the time it has left). */
const DEADLINE_MARGIN_MS = 250;

type KeySet = ReturnType<typeof createLocalJWKSet>;

interface CachedSet {
  keys: KeySet;
  fetchedAt: number;
  /** When the last fetch at its URI ended: when it was fetched, or when a fetch since failed. */
  refreshedAt: number;
}

/** Key sets by URI; few are configured, so a bound stops only a config that names a new one per call. */
const cache = new LRUCache<string, CachedSet>({ max: 100 });
/** Verifiers of inline key sets, by the set's JSON. */
const inlineSets = new LRUCache<string, KeySet>({ max: 100 });
/** Fetches under way, by URI: concurrent checks of a cold cache share one. */
const fetching = new Map<string, Promise<CachedSet>>();

/** A key set that could not be had: the check errs, rather than fail the token. */
class KeySetUnavailable extends Error {}

const JwksSchema = Type.Object(
  { keys: Type.Array(Type.Object({ kty: Type.String() }, { additionalProperties: true })) },
  { additionalProperties: true },
);

export const jwt = defineCheck({
  id: 'jwt',
  events: ['beforeRequestHook'],
  parameters: Type.Object(
    {
      jwks: Type.Optional(JwksSchema),
      jwksUri: Type.Optional(HttpUrlSchema),
      introspectEndpoint: Type.Optional(HttpUrlSchema),
      // Taken as the reference gateway's, which sends a JSON body whatever it says; so does this check.
      introspectContentType: Type.Optional(Type.String()),
      introspectCacheMaxAge: Type.Optional(Type.Number({ minimum: 0 })),
      headerKey: Type.Optional(Type.String({ pattern: HEADER_NAME })),
      cacheMaxAge: Type.Optional(Type.Number({ minimum: 0 })),
      clockTolerance: Type.Optional(DurationSchema),
      maxTokenAge: Type.Optional(DurationSchema),
      // An empty list is the reference gateway's default, as it reads one.
      algorithms: Type.Optional(Type.Array(Type.Union(ALGORITHMS.map((alg) => Type.Literal(alg))))),
      requiredClaims: Type.Optional(Type.Array(Type.String())),
      claimValues: Type.Optional(ClaimValuesSchema),
      headerPayloadMatch: Type.Optional(Type.Array(Type.String())),
      // Given in the check's data once the token passed (jwt-extract-claims.ts); the provider gets none.
      extractClaims: Type.Optional(Type.Array(Type.String())),
      claimPrefix: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  ),
  refine(p) {
    if (p.jwks === undefined && p.jwksUri === undefined && p.introspectEndpoint === undefined) {
      return {
        param: 'parameters.jwksUri',
        message: 'is required when neither jwks nor introspectEndpoint is given',
      };
    }
    if (p.jwks !== undefined) {
      const problem = inlineSetProblem(p.jwks);
      if (problem !== null) return { param: 'parameters.jwks', message: problem };
      const algorithms =
        p.algorithms !== undefined && p.algorithms.length > 0 ? p.algorithms : DEFAULT_ALGORITHMS;
      // A key none of the algorithms takes (an encryption key beside the signing ones, as identity providers
      // publish them) is passed over, as jose passes it over; a key one of them takes must be able to verify.
      let taken = 0;
      for (const [i, key] of p.jwks.keys.entries()) {
        if (!takenByAny(key, algorithms)) continue;
        taken += 1;
        const unusable = inlineKeyProblem(key);
        if (unusable !== null) return { param: `parameters.jwks.keys[${i}]`, message: unusable };
      }
      if (p.jwks.keys.length > 0 && taken === 0) {
        return {
          param: 'parameters.jwks',
          message: `holds no key any of the algorithms (${algorithms.join(', ')}) can use: see its keys' kty, crv, alg, use and key_ops`,
        };
      }
    }
    for (const field of ['jwksUri', 'introspectEndpoint'] as const) {
      const url = p[field];
      const broken = url === undefined ? null : outboundRuleBreak(field, url, undefined);
      if (broken !== null) return broken;
    }
    return claimValuesRuleBreak(p.claimValues);
  },
  async run(ctx, p, services) {
    const header = headerValue(ctx, p.headerKey ?? 'Authorization');
    if (header === undefined || header.trim() === '') {
      return { verdict: false, explanation: 'Missing authorization header' };
    }
    const token = header.replace(/^Bearer\s+/i, '').trim();
    // As the reference gateway's: an endpoint, when given, is asked instead of any key set.
    if (p.introspectEndpoint !== undefined) {
      const answer = await introspect(
        token,
        p.introspectEndpoint,
        p.introspectCacheMaxAge,
        seconds(p.clockTolerance ?? DEFAULT_CLOCK_TOLERANCE_S),
        services,
        ctx.signal,
      );
      if (!answer.valid) {
        return {
          verdict: false,
          explanation: answer.explanation,
          data: { validations: { signatureValid: false } },
        };
      }
      let tokenHeader: JWSHeaderParameters = {};
      try {
        tokenHeader = decodeProtectedHeader(token);
      } catch {
        // An opaque token has no header: a headerPayloadMatch rule compares with nothing.
      }
      return claimsVerdict(p, tokenHeader, answer.payload, token);
    }
    let decoded: { header: JWSHeaderParameters; payload: JWTPayload };
    try {
      decoded = { header: decodeProtectedHeader(token), payload: decodeJwt(token) };
    } catch (err) {
      // Decoding reads only the token: whatever it throws (a TypeError for a malformed header), the
      // token is at fault.
      return { verdict: false, explanation: `JWT validation error: ${(err as Error).message}` };
    }
    // As the reference gateway's: a key is chosen by its id alone, so a token without one has none.
    if (typeof decoded.header.kid !== 'string') {
      return { verdict: false, explanation: 'No matching key found for kid' };
    }
    const inline = p.jwks === undefined ? undefined : inlineSet(p.jwks);
    const maxAgeMs = (p.cacheMaxAge ?? DEFAULT_CACHE_MAX_AGE_S) * 1000;
    /** Why the set at jwksUri could not be had: the one error, with the check's timeout, that is not the
     * token's fault. */
    let unavailable: unknown;
    const getKey = async (protectedHeader: JWSHeaderParameters, input: FlattenedJWSInput) => {
      if (inline !== undefined) {
        try {
          return await inline(protectedHeader, input);
        } catch (err) {
          // A key the inline set lacks is looked for at jwksUri, when there is one.
          if (!(err instanceof errors.JWKSNoMatchingKey) || p.jwksUri === undefined) throw err;
        }
      }
      const uri = p.jwksUri!;
      let set: CachedSet;
      try {
        set = await currentSet(uri, maxAgeMs, services, ctx.signal, ctx.deadline);
      } catch (fetchErr) {
        unavailable = fetchErr;
        throw fetchErr;
      }
      try {
        return await set.keys(protectedHeader, input);
      } catch (err) {
        if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
        const newer = await newerSet(uri, set, services, ctx.signal, ctx.deadline);
        if (newer === null) throw err;
        return newer.keys(protectedHeader, input);
      }
    };
    let verified: JWTVerifyResult;
    try {
      verified = await verifyWithEachKey(token, getKey, {
        clockTolerance: p.clockTolerance ?? DEFAULT_CLOCK_TOLERANCE_S,
        // Never `none` nor HS*: the schema lists neither, and jose's key sets take no secret algorithm.
        algorithms: p.algorithms !== undefined && p.algorithms.length > 0 ? p.algorithms : DEFAULT_ALGORITHMS,
        // As the reference gateway's: the token's age is bounded only when it says when it was issued; an iat
        // of 0 says so too (and one that is not a number fails, as jose takes none).
        ...(decoded.payload.iat !== undefined && { maxTokenAge: p.maxTokenAge ?? DEFAULT_MAX_TOKEN_AGE }),
      });
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey) {
        return { verdict: false, explanation: 'No matching key found for kid' };
      }
      // jose judges the claims only once the signature has verified.
      if (err instanceof errors.JWTExpired || err instanceof errors.JWTClaimValidationFailed) {
        return {
          verdict: false,
          explanation: claimsFailure(err),
          data: { validations: { signatureValid: true } },
        };
      }
      if (err === unavailable || ctx.signal.aborted) throw err;
      // Whatever else stopped the verification came of the token, or of the key its header chose (jose
      // refuses an RSA key shorter than 2048 bits with a TypeError; WebCrypto a malformed key with a
      // DOMException): no key verified it, and it fails. As an error, which on_error passes by default, a
      // token made up to reach such a key would pass.
      return {
        verdict: false,
        explanation: `JWT signature validation error: ${verificationFailure(err)}`,
        data: { validations: { signatureValid: false } },
      };
    }
    return claimsVerdict(p, verified.protectedHeader, verified.payload, token);
  },
});

/**
 * jose's `jwtVerify`, but a set holding more than one key for the token's key id and algorithm (a key
 * rotated in place) has each tried, as jose advises, where `jwtVerify` gives up; the reference gateway takes
 * the first. A key whose signature verifies decides, times and all.
 */
async function verifyWithEachKey(
  token: string,
  getKey: (header: JWSHeaderParameters, input: FlattenedJWSInput) => Promise<CryptoKey>,
  options: JWTVerifyOptions,
): Promise<JWTVerifyResult> {
  try {
    return await jwtVerify(token, getKey, options);
  } catch (err) {
    if (!(err instanceof errors.JWKSMultipleMatchingKeys)) throw err;
    let failure: unknown;
    for await (const key of err) {
      try {
        return await jwtVerify(token, key, options);
      } catch (keyErr) {
        // jose judges the claims only once a key verified the signature: that key decides.
        if (
          keyErr instanceof errors.JWTExpired ||
          keyErr instanceof errors.JWTClaimValidationFailed ||
          keyErr instanceof errors.JWTInvalid
        ) {
          throw keyErr;
        }
        // Else this key did not verify, whether the signature is not its or the key cannot be used; the
        // next may. A signature that did not verify says more than a key that could not be used.
        if (failure === undefined || keyErr instanceof errors.JWSSignatureVerificationFailed)
          failure = keyErr;
      }
    }
    throw failure ?? err;
  }
}

/** Why a token did not verify, in words that hold neither the token nor a key: jose's, WebCrypto's or a
 * TypeError's message (jose's own about keys and algorithms), else the error's name. */
function verificationFailure(err: unknown): string {
  if (err instanceof errors.JOSEError || err instanceof TypeError || err instanceof DOMException) {
    return err.message;
  }
  return err instanceof Error ? err.name : 'the token could not be verified';
}

/** The verdict on a token whose signature (or introspection) and times held: its claims decide, and
 * those `extractClaims` names are given with a pass, as the reference gateway gives them only then. */
function claimsVerdict(
  p: ClaimRules & { extractClaims?: string[]; claimPrefix?: string },
  header: JWSHeaderParameters,
  payload: Record<string, unknown>,
  token: string,
): CheckVerdict {
  const claims = judgeClaims(p, header, payload);
  const passed = claims.failures.length === 0;
  const toExtract = passed ? (p.extractClaims ?? []) : [];
  return {
    verdict: passed,
    explanation: passed
      ? 'JWT token validation succeeded'
      : `JWT validation failed: ${claims.failures.join('; ')}`,
    data: {
      validations: { signatureValid: true, ...claims.validations },
      ...(toExtract.length > 0 && {
        extractedClaims: extractClaims(payload, toExtract, p.claimPrefix ?? DEFAULT_CLAIM_PREFIX, token),
      }),
    },
  };
}

/** What is wrong with the claims of a token whose signature verified, in the reference gateway's words
 * for a token expired or not yet valid (its introspection's), else jose's reason. */
function claimsFailure(err: errors.JWTExpired | errors.JWTClaimValidationFailed): string {
  if (err.reason === 'check_failed' && err.claim === 'exp') return 'Token has expired';
  if (err.reason === 'check_failed' && err.claim === 'nbf') return 'Token not yet valid';
  return `JWT validation failed: ${err.message}`;
}

const UNIT_SECONDS: Array<[RegExp, number]> = [
  [/^(seconds?|secs?|s)$/, 1],
  [/^(minutes?|mins?|m)$/, 60],
  [/^(hours?|hrs?|h)$/, 3600],
  [/^(days?|d)$/, 86_400],
  [/^(weeks?|w)$/, 604_800],
  [/^(years?|yrs?|y)$/, 31_557_600],
];

/** A duration as the schema takes it (seconds, or jose's `30s`, `2m` …), in seconds. */
function seconds(duration: number | string): number {
  if (typeof duration === 'number') return duration;
  const [, amount, unit] = /^(\d+(?:\.\d+)?) ?([a-z]+)$/.exec(duration)!;
  const factor = UNIT_SECONDS.find(([pattern]) => pattern.test(unit!))![1];
  return Math.round(Number(amount) * factor);
}

/** The members of a JWK that hold its private half (RFC 7518 §6.2.2, §6.3.2; OKP's `d` of RFC 8037). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth'];

/** Why an inline key set cannot be used, or null. A symmetric key, or a private one pasted in place of its
 * public half, would be a secret kept in the config (and the latter verifies nothing), and is refused as
 * the HS* algorithms are. */
function inlineSetProblem(jwks: JSONWebKeySet): string | null {
  if (jwks.keys.some((key) => key.kty === 'oct')) {
    return 'holds a symmetric (oct) key; only public keys (RSA, EC, OKP) are taken';
  }
  if (jwks.keys.some((key) => PRIVATE_MEMBERS.some((member) => Object.hasOwn(key, member)))) {
    return 'holds a private key; give only its public members (kty, n, e, crv, x, y, kid, alg, use)';
  }
  try {
    createLocalJWKSet(jwks);
    return null;
  } catch (err) {
    return `is not a JSON Web Key Set (${err instanceof Error ? err.message : String(err)})`;
  }
}

/** The key type (and curve) each of `ALGORITHMS` takes a key of, as jose chooses keys from a set. */
const KEY_OF: Record<string, { kty: string; crv?: string }> = {
  RS256: { kty: 'RSA' },
  RS384: { kty: 'RSA' },
  RS512: { kty: 'RSA' },
  PS256: { kty: 'RSA' },
  PS384: { kty: 'RSA' },
  PS512: { kty: 'RSA' },
  ES256: { kty: 'EC', crv: 'P-256' },
  ES384: { kty: 'EC', crv: 'P-384' },
  ES512: { kty: 'EC', crv: 'P-521' },
  EdDSA: { kty: 'OKP', crv: 'Ed25519' },
  Ed25519: { kty: 'OKP', crv: 'Ed25519' },
};

/** The shortest RSA modulus jose verifies with. */
const MIN_RSA_BITS = 2048;

/** Whether jose would choose a key of an inline set for one of `algorithms` (its type, curve, `alg`, `use`, `key_ops`). */
function takenByAny(key: JSONWebKeySet['keys'][number], algorithms: readonly string[]): boolean {
  return algorithms.some((alg) => {
    const wanted = KEY_OF[alg]!;
    const ops = key.key_ops;
    return (
      key.kty === wanted.kty &&
      (wanted.crv === undefined || key.crv === wanted.crv) &&
      (key.alg === undefined || key.alg === alg) &&
      (key.use === undefined || key.use === 'sig') &&
      (ops === undefined || (Array.isArray(ops) && ops.includes('verify')))
    );
  });
}

/**
 * Why a key of an inline set that an allowed algorithm takes (takenByAny) can never verify, or null: it
 * cannot be imported, or it is an RSA key shorter than jose takes. Such a key would be kept in the config
 * and fail every token it was meant for.
 */
function inlineKeyProblem(key: JSONWebKeySet['keys'][number]): string | null {
  let details: { modulusLength?: number } | undefined;
  try {
    details = createPublicKey({ key: key as NodeJwk, format: 'jwk' }).asymmetricKeyDetails;
  } catch {
    return `is not a valid ${key.kty} public key`;
  }
  if (key.kty === 'RSA' && (details?.modulusLength ?? 0) < MIN_RSA_BITS) {
    return `is an RSA key of ${details?.modulusLength ?? 0} bits; at least ${MIN_RSA_BITS} are needed to verify`;
  }
  return null;
}

/** The verifier of an inline set, kept per distinct set so its imported keys are reused. */
function inlineSet(jwks: JSONWebKeySet): KeySet {
  const key = JSON.stringify(jwks);
  let keys = inlineSets.get(key);
  if (keys === undefined) {
    keys = createLocalJWKSet(jwks);
    inlineSets.set(key, keys);
  }
  return keys;
}

function headerValue(ctx: CheckContext, name: string): string | undefined {
  const value = ctx.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * For a token whose key id `set` lacks, the set at `uri` as fetched since: the one a fetch under way brings
 * (whoever began it), else one fetched meanwhile, else one fetched now when the last fetch ended longer
 * than the cooldown ago. Null when there is none, the fetch failed, or it has not ended shortly before the
 * check's `deadline` (the fetch goes on, and its set serves later tokens): the token then fails for want of
 * its key. As an error, which on_error passes by default, any made-up key id would pass while the set's
 * host is down or slow.
 */
async function newerSet(
  uri: string,
  set: CachedSet,
  services: CheckServices,
  signal: AbortSignal,
  deadline: number | undefined,
): Promise<CachedSet | null> {
  if (!fetching.has(uri)) {
    // The cache holds the set fetched last.
    const latest = cache.peek(uri);
    if (latest !== undefined && latest !== set) return latest;
    if (Date.now() - set.refreshedAt < COOLDOWN_MS) return null;
  }
  const stop = shortlyBefore(deadline);
  try {
    return await keySet(uri, 0, services, AbortSignal.any([signal, stop.signal]));
  } catch (err) {
    if (signal.aborted) throw err;
    return null;
  } finally {
    stop.clear();
  }
}

/**
 * The set at `uri` for a token: as `keySet` gives it, but when a set is kept and fetching it again (its
 * `maxAgeMs` passed) has not ended shortly before the check's `deadline`, the set kept, older as it is: the
 * token is judged by it (a key it holds verifies, else the token fails) rather than run out of time, an
 * error which on_error passes by default. The fetch goes on, and its set serves later tokens. With no set
 * kept there is nothing to judge by, and the wait is the check's to bound.
 */
async function currentSet(
  uri: string,
  maxAgeMs: number,
  services: CheckServices,
  signal: AbortSignal,
  deadline: number | undefined,
): Promise<CachedSet> {
  const kept = cache.peek(uri);
  if (kept === undefined) return keySet(uri, maxAgeMs, services, signal);
  const stop = shortlyBefore(deadline);
  try {
    return await keySet(uri, maxAgeMs, services, AbortSignal.any([signal, stop.signal]));
  } catch (err) {
    if (signal.aborted || !stop.signal.aborted) throw err;
    return cache.peek(uri) ?? kept;
  } finally {
    stop.clear();
  }
}

/** A signal aborted shortly before `deadline` (a performance.now() time): DEADLINE_MARGIN_MS before it, or
 * a tenth of the time left when that is less; never, without a deadline. */
function shortlyBefore(deadline: number | undefined): { signal: AbortSignal; clear: () => void } {
  const stop = new AbortController();
  const left = deadline === undefined ? Infinity : deadline - performance.now();
  const timer = Number.isFinite(left)
    ? setTimeout(() => stop.abort(), Math.max(0, left - Math.min(DEADLINE_MARGIN_MS, left / 10)))
    : undefined;
  return { signal: stop.signal, clear: () => clearTimeout(timer) };
}

/** The set at `uri`, from the cache when fetched less than `maxAgeMs` ago, else fetched (or the fetch under
 * way awaited). A fetch that fails starts the cooldown of the set kept, from when it failed. */
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
    pending = fetchKeySet(uri, services)
      .catch((err: unknown) => {
        const kept = cache.peek(uri);
        if (kept !== undefined) kept.refreshedAt = Date.now();
        throw err;
      })
      .finally(() => fetching.delete(uri));
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
  const fetchedAt = Date.now();
  const set = { keys, fetchedAt, refreshedAt: fetchedAt };
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
