/**
 * The gateway's 429 for a call over a policy's limit: `type: "rate_limit_exceeded"`, `code` the policy's
 * id, a message naming the policy and the group it counted the call in, `Retry-After` and the
 * `x-ratelimit-*` headers. Recorded in the log under the error code `rate_limit_exceeded`.
 */
import { GatewayError, type ErrorBody } from '../../core/errors.js';
import type { RateLimitPolicy } from '../../store/types.js';
import { formatDuration } from './rate-limit-headers.js';

const UNIT_NAMES = { rpm: 'minute', rph: 'hour', rpd: 'day' } as const;

export class RateLimitExceededError extends GatewayError {
  readonly policyId: string;

  constructor(
    policy: RateLimitPolicy,
    groupLabel: string,
    retryAfterMs: number,
    headers: Record<string, string>,
  ) {
    const name = policy.name ? ` ("${policy.name}")` : '';
    super(
      'rate_limit_exceeded',
      `Rate limit policy ${policy.id}${name} allows ${policy.value} ${policy.type} per ` +
        `${UNIT_NAMES[policy.unit]} for ${groupLabel}; try again in ${formatDuration(retryAfterMs)}`,
      { headers },
    );
    this.policyId = policy.id;
  }

  override toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: null, code: this.policyId } };
  }
}
