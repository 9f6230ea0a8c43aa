/**
 * Token introspection for `default.jwt` (`introspectEndpoint`), as the reference gateway does it: the
 * token is POSTed as `{"token": …}` to the endpoint, which says whether it is good (`active: true`, as RFC
 * 7662 answers; else `valid: true`, or a `sub`), and whose answer is then the token's claims: `exp` and
 * `nbf` are checked against the clock within the tolerance, and the claim rules run on them.
 *
 * The POST goes through the engine's `postJson` (custom-host address policy, the HMAC signature, the
 * check's timeout); an endpoint that cannot be reached is an error, which the hook's `on_error` decides. A
 * good answer is kept for `introspectCacheMaxAge` seconds when given, never past the token's `exp`, keyed by
 * a hash of the endpoint and the token (no token is kept).
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { CheckServices } from '../check-types.js';

export type Introspection =
  { valid: true; payload: Record<string, unknown> } | { valid: false; explanation: string };

/** Good answers by endpoint and token hash; bounded, so many callers' tokens cannot grow it. */
const answers = new LRUCache<string, Record<string, unknown>>({ max: 10_000 });

export async function introspect(
  token: string,
  endpoint: string,
  cacheMaxAgeS: number | undefined,
  toleranceS: number,
  services: CheckServices,
  signal: AbortSignal,
): Promise<Introspection> {
  const key = createHash('sha256').update(endpoint).update('\0').update(token).digest('hex');
  const cached = cacheMaxAgeS ? answers.get(key) : undefined;
  if (cached !== undefined && secondsLeft(cached, toleranceS) !== 0) return timed(cached, toleranceS);

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
  if (!good) return { valid: false, explanation: 'Token validation failed' };
  if (cacheMaxAgeS) {
    const left = secondsLeft(payload, toleranceS);
    const ttl = Math.min(cacheMaxAgeS, left ?? Infinity);
    if (ttl > 0) answers.set(key, payload, { ttl: ttl * 1000 });
  }
  return timed(payload, toleranceS);
}

/** Seconds until the answer's `exp` passes (with the tolerance), 0 once it has; undefined without `exp`. */
function secondsLeft(payload: Record<string, unknown>, toleranceS: number): number | undefined {
  if (!payload.exp) return undefined;
  const exp = Number(payload.exp);
  if (Number.isNaN(exp)) return undefined;
  return Math.max(0, exp + toleranceS - Math.floor(Date.now() / 1000));
}

/** The answer, unless its `exp` has passed or its `nbf` is yet to come (within the tolerance). */
function timed(payload: Record<string, unknown>, toleranceS: number): Introspection {
  if (secondsLeft(payload, toleranceS) === 0) return { valid: false, explanation: 'Token has expired' };
  if (payload.nbf) {
    const nbf = Number(payload.nbf);
    if (!Number.isNaN(nbf) && nbf - toleranceS > Math.floor(Date.now() / 1000)) {
      return { valid: false, explanation: 'Token not yet valid' };
    }
  }
  return { valid: true, payload };
}
