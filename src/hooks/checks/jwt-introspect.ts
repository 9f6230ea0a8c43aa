/**
 * Token introspection for `default.jwt` (`introspectEndpoint`), as the reference gateway does it: the
 * token is POSTed as `{"token": …}` to the endpoint, which says whether it is good (`active: true`, as RFC
 * 7662 answers; else `valid: true`, or a `sub`), and whose answer is then the token's claims: `exp` and
 * `nbf`, when present, must be numbers and hold against the clock within the tolerance, and the claim rules
 * run on them.
 *
 * The POST goes through the engine's `postJson` (custom-host address policy, the HMAC signature, the
 * check's timeout); an endpoint that cannot be reached is an error, which the hook's `on_error` decides. A
 * good answer is kept, keyed by a hash of the endpoint and the token (no token is kept), and read by a check
 * with `introspectCacheMaxAge` while younger than that check's own `introspectCacheMaxAge`: the cache is
 * shared by every config naming the endpoint, so how long an answer holds is the reader's to say, not the
 * one's that stored it. An answer is never read once the token's `exp` has passed, and an answer saying the
 * token is not good drops the kept one.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { CheckServices } from '../check-types.js';

export type Introspection =
  { valid: true; payload: Record<string, unknown> } | { valid: false; explanation: string };

interface KeptAnswer {
  payload: Record<string, unknown>;
  /** When it was kept, by the monotonic clock (performance.now()): a wall clock set back must not make
   * an answer younger. The token's `exp` and `nbf` are judged by the wall clock, as they are written. */
  storedAt: number;
}

/** Good answers by endpoint and token hash; bounded, so many callers' tokens cannot grow it. */
const answers = new LRUCache<string, KeptAnswer>({ max: 10_000 });

export async function introspect(
  token: string,
  endpoint: string,
  cacheMaxAgeS: number | undefined,
  toleranceS: number,
  services: CheckServices,
  signal: AbortSignal,
): Promise<Introspection> {
  const key = createHash('sha256').update(endpoint).update('\0').update(token).digest('hex');
  if (cacheMaxAgeS) {
    const kept = answers.get(key);
    if (
      kept !== undefined &&
      performance.now() - kept.storedAt < cacheMaxAgeS * 1000 &&
      secondsLeft(kept.payload, toleranceS) !== 0
    ) {
      return timed(kept.payload, toleranceS);
    }
  }

  const answer = await services.postJson(endpoint, { token }, {}, signal, 'introspectEndpoint');
  if (answer.status < 200 || answer.status > 299) {
    return { valid: false, explanation: `Endpoint validation failed with status ${answer.status}` };
  }
  const body = answer.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { valid: false, explanation: 'Endpoint validation error: the answer is not a JSON object' };
  }
  const payload = body as Record<string, unknown>;
  const good =
    payload.active !== undefined
      ? payload.active === true
      : payload.valid === true || (payload.sub !== undefined && payload.sub !== null);
  if (!good) {
    answers.delete(key);
    return { valid: false, explanation: 'Token validation failed' };
  }
  if (cacheMaxAgeS && malformedTime(payload) === undefined) {
    // Whatever age a later reader takes, the answer is no use past the token's exp: it goes then (an
    // answer without exp stays until pushed out).
    const left = secondsLeft(payload, toleranceS);
    const ttl = left === undefined ? 0 : left * 1000;
    if (left !== 0) answers.set(key, { payload, storedAt: performance.now() }, { ttl });
  }
  return timed(payload, toleranceS);
}

/** The answer's `exp` or `nbf`: undefined when absent (or null), NaN when present and not a number. */
function time(payload: Record<string, unknown>, claim: 'exp' | 'nbf'): number | undefined {
  const value = payload[claim];
  if (value === undefined || value === null) return undefined;
  return typeof value === 'number' ? value : NaN;
}

/** The first of `exp` and `nbf` present in the answer and not a number. */
function malformedTime(payload: Record<string, unknown>): 'exp' | 'nbf' | undefined {
  return (['exp', 'nbf'] as const).find((claim) => Number.isNaN(time(payload, claim)));
}

/** Seconds until the answer's `exp` passes (with the tolerance), 0 once it has; undefined without a numeric
 * `exp`. */
function secondsLeft(payload: Record<string, unknown>, toleranceS: number): number | undefined {
  const exp = time(payload, 'exp');
  if (exp === undefined || Number.isNaN(exp)) return undefined;
  return Math.max(0, exp + toleranceS - Math.floor(Date.now() / 1000));
}

/** The answer, unless its `exp` or `nbf` is not a number, its `exp` has passed or its `nbf` is yet to come
 * (within the tolerance). */
function timed(payload: Record<string, unknown>, toleranceS: number): Introspection {
  const malformed = malformedTime(payload);
  if (malformed !== undefined) {
    return { valid: false, explanation: `Token validation failed: "${malformed}" claim must be a number` };
  }
  if (secondsLeft(payload, toleranceS) === 0) return { valid: false, explanation: 'Token has expired' };
  const nbf = time(payload, 'nbf');
  if (nbf !== undefined && nbf - toleranceS > Math.floor(Date.now() / 1000)) {
    return { valid: false, explanation: 'Token not yet valid' };
  }
  return { valid: true, payload };
}
