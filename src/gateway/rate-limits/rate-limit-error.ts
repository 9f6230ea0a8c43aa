/**
 * The gateway's 429 for a call over a policy's limit, in OpenAI's shape: `type` the policy's unit
 * (`requests` or `tokens`, as OpenAI's own 429 says which limit it hit), `code: "rate_limit_exceeded"` (what
 * clients test), a message naming the policy (id and name) and the group it counted the call in,
 * `Retry-After`, the `x-ratelimit-*` headers and `x-gateway-rate-limit-policy` (the policy's id). Recorded in
 * the log under the error code `rate_limit_exceeded`.
 */
import { GatewayError, type ErrorBody } from '../../core/errors.js';
import type { RateLimitPolicy } from '../../store/types.js';
import { formatDuration } from './rate-limit-headers.js';

const UNIT_NAMES = { rpm: 'minute', rph: 'hour', rpd: 'day' } as const;

export class RateLimitExceededError extends GatewayError {
  readonly policyId: string;
  /** What the policy counts: the `type` of the answer's error, as OpenAI's 429 names its limit. */
  readonly limitType: RateLimitPolicy['type'];

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
      { headers: { ...headers, 'x-gateway-rate-limit-policy': policy.id } },
    );
    this.policyId = policy.id;
    this.limitType = policy.type;
  }

  override toBody(): ErrorBody {
    return {
      error: { message: this.message, type: this.limitType, param: null, code: 'rate_limit_exceeded' },
    };
  }
}
