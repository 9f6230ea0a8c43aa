/**
 * What the circuit breaker of a target (`cb_config`) counts, and under which key. The state machine
 * itself (consecutive failures → open for `cooldown_interval` → one probe → closed or open again) is
 * `createBreaker` of src/state, kept in the shared state so every gateway node sees the same circuit.
 */
import type { CircuitBreakerConfig } from '../config/index.js';
import type { AttemptFailure } from '../attempt.js';
import { targetPart } from './target-settings.js';

/**
 * Whether a failed attempt counts against the breaker. Timeouts and connection failures (including a
 * stream that broke) always count; a status counts when it is in `failure_status_codes`, or by default
 * when it is above 500 (501-599: 500 itself is often caused by the request, not an outage, and can be
 * listed explicitly). Configuration errors and a client that went away never count.
 */
export function countsAsBreakerFailure(failure: AttemptFailure, config: CircuitBreakerConfig): boolean {
  switch (failure.reason) {
    case 'client_gone':
    case 'config':
    case 'circuit_open':
      return false;
    case 'timeout':
    case 'connection':
    case 'stream_cut':
      return true;
    default: {
      const codes = config.failure_status_codes;
      return codes ? codes.includes(failure.status) : failure.status > 500;
    }
  }
}

/**
 * The breaker's key: the workspace, the provider, the address it is reached at and the model. Two configs
 * of one workspace that point at the same upstream model share one breaker; other workspaces, with other
 * credentials and quotas, never trip it.
 */
export function breakerKey(parts: {
  workspaceId: string;
  provider: string;
  baseUrl: string | undefined;
  model: string | undefined;
  /** The target's deployment settings (routing/target-settings.ts): two deployments behind one address
   * fail apart. */
  target?: object;
}): string {
  const key = [parts.workspaceId, parts.provider, parts.baseUrl ?? 'default', parts.model ?? ''];
  const settings = targetPart(parts.target);
  // In TARGET_FIELDS' order, so the same settings always write the same text.
  if (settings) key.push(JSON.stringify(settings));
  return key.join('|');
}
