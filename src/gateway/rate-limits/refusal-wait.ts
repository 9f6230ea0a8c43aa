/**
 * For the gateway's own calls that can wait (a batch line, a background response): whether a failed call
 * was refused by the rate limits in a way a later run may pass, and how long to wait for it.
 */
import { GatewayError, type ProviderError } from '../../core/errors.js';

/** A policy's limit reached, or the limits' shared state unreachable (fail mode `closed`). */
const WAIT_ON = new Set(['rate_limit_exceeded', 'rate_limit_unavailable']);

/** The refusal's `Retry-After` in ms (a second when it gives none); undefined for any other failure. */
export function refusalWaitMs(error: GatewayError | ProviderError): number | undefined {
  if (!(error instanceof GatewayError) || !WAIT_ON.has(error.code)) return undefined;
  const seconds = Number(error.headers['retry-after']);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000;
}
