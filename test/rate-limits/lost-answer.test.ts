/**
 * A rate-limit check whose Redis script failed: its charge is given back by its mark (giveBackUnanswered)
 * only when its answer was lost (the connection closed after it was sent, or it timed out), as Redis may
 * have run it whole. An error Redis answered (a ReplyError, such as OOM under noeviction on a counter's
 * write) says the script stopped partway, and Redis does not roll back what it wrote before: the counters
 * it charged stay charged (and marked), and giving back every counter's units would return some the
 * script never took. Such a charge stands until drained, the safe way to fail.
 */
import { ReplyError } from 'ioredis';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { RateLimiter } from '../../src/gateway/rate-limits/rate-limiter.js';
import type { TargetCall } from '../../src/gateway/pipeline-types.js';
import { LeasedRateCounter } from '../../src/state/leased-rate-counter.js';
import type { RateCounter } from '../../src/state/rate-counter.js';
import type { RedisRateCounter } from '../../src/state/redis-rate-counter.js';
import type { RateLimitPolicy } from '../../src/store/types.js';

const policy: RateLimitPolicy = {
  id: '00000000-0000-4000-8000-000000000001',
  organisation_id: 'org',
  workspace_id: 'ws',
  name: 'per key',
  type: 'requests',
  unit: 'rpm',
  value: 10,
  status: 'active',
  conditions: [],
  group_by: [{ key: 'api_key' }],
  created_at: 0,
  updated_at: 0,
} as RateLimitPolicy;

function targetCall(): TargetCall {
  const ctx = {
    apiKey: { id: 'key', workspace_id: 'ws', organisation_id: 'org' },
    metadata: {},
    traceId: 'trace',
  };
  return {
    run: { deps: { lookups: { cachedRateLimitPolicies: () => [policy] } }, call: { ctx, state: {} } },
    resolved: { adapter: { id: 'openai' } },
    model: 'gpt-4o-mini',
  } as unknown as TargetCall;
}

const failures: Array<[string, () => Error]> = [
  ['a ReplyError from Redis', () => new ReplyError('OOM command not allowed when used memory > maxmemory')],
  ['a lost connection', () => new Error('Connection is closed.')],
];

describe('a rate-limit check whose script failed, under the closed fail mode', () => {
  for (const [name, failure] of failures) {
    it(`gives its charge back by its mark only when its answer was lost: ${name}`, async () => {
      const giveBackUnanswered = vi.fn(() => Promise.resolve(true));
      const counter: RateCounter = {
        kind: 'redis',
        take: () => Promise.reject(failure()),
        giveBackUnanswered,
        adjust: () => Promise.resolve(),
        close: () => Promise.resolve(),
      };
      const limiter = new RateLimiter({
        counter,
        failMode: 'closed',
        timeoutMs: 1_000,
        logger: pino({ level: 'silent' }),
      });
      await expect(limiter.admit(targetCall())).rejects.toMatchObject({ code: 'rate_limit_unavailable' });
      await new Promise((resolve) => setImmediate(resolve));
      const lost = !(failure() instanceof ReplyError);
      expect(giveBackUnanswered).toHaveBeenCalledTimes(lost ? 1 : 0);
    });
  }
});

describe('a leased counter whose Redis take failed', () => {
  for (const [name, failure] of failures) {
    it(`keeps what it asked Redis for, to give back, only when the answer was lost: ${name}`, async () => {
      const giveBackUnanswered = vi.fn(() => Promise.resolve(true));
      const redis = {
        take: () => Promise.reject(failure()),
        giveBackUnanswered,
      } as unknown as RedisRateCounter;
      const counter = new LeasedRateCounter(redis, { lifetimeMs: 60_000 });
      const take = { key: 'rl:k', periodMs: 60_000, limit: 10, need: 1, cost: 1 };
      await expect(counter.take([take], 0, 'node:1')).rejects.toThrow(failure().message);
      const lost = !(failure() instanceof ReplyError);
      const back = [{ key: 'rl:k', periodMs: 60_000, limit: 10, units: -1 }];
      expect(await counter.giveBackUnanswered('node:1', back, 0)).toBe(lost);
      expect(giveBackUnanswered).toHaveBeenCalledTimes(lost ? 1 : 0);
      await counter.close();
    });
  }
});
