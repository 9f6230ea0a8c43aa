/**
 * What routing keeps between requests: the circuit breakers, the response caches and the rate-limit
 * counters, all in the gateway's shared state (process memory, or Redis so every node sees the same
 * circuit, answers and counts), and the random
 * source of the loadbalance picker and of backoff jitter. Built once per gateway in gateway-server.ts.
 */
import type { Logger } from 'pino';
import { createBreaker, createRateCounter, type SharedState } from '../../state/index.js';
import { RateLimiter } from '../rate-limits/rate-limiter.js';
import { createResponseCache } from '../cache/index.js';
import { InFlightAnswers } from '../cache/in-flight.js';
import { failOpenBreaker } from './fail-open-breaker.js';
import {
  callPassthrough,
  callTarget,
  composeSteps,
  DEFAULT_TARGET_STEPS,
  PASSTHROUGH_STEPS,
  type TargetStep,
} from '../steps/index.js';
import type { RateLimitFailMode, RoutingRuntime, SemanticCacheRuntime } from '../pipeline-types.js';

export type { RoutingRuntime } from '../pipeline-types.js';

export function createRoutingRuntime(
  state: SharedState,
  options: {
    cacheMaxBytes: number;
    semantic: SemanticCacheRuntime;
    targetSteps?: readonly TargetStep[] | undefined;
    rateLimits: {
      failMode: RateLimitFailMode;
      timeoutMs: number;
      logger: Logger;
      /** The counters' clock, when not their own (tests inject time). */
      clock?: (() => number) | undefined;
    };
  },
): RoutingRuntime {
  const { clock, logger } = options.rateLimits;
  const counter = createRateCounter(state, {
    clock,
    onError: (err) => logger.warn({ err }, 'rate limits: unused leased units could not be given back'),
  });
  return {
    breaker: failOpenBreaker(createBreaker(state), logger),
    cache: createResponseCache({ state, memory: { maxBytes: options.cacheMaxBytes } }),
    cacheFlights: new InFlightAnswers(),
    random: Math.random,
    modelChain: composeSteps(options.targetSteps ?? DEFAULT_TARGET_STEPS, callTarget),
    passthroughChain: composeSteps(PASSTHROUGH_STEPS, callPassthrough),
    rateLimits: new RateLimiter({ ...options.rateLimits, counter }),
    semantic: options.semantic,
  };
}
