/**
 * The circuit breaker of a target (`cb_config`): an open circuit answers at once with `circuit_open`
 * (a fallback moves on); after the cooldown one call probes, and its outcome closes or reopens the
 * circuit. What counts as a failure and the key are in routing/circuit-breaker.ts. The runtime's breaker
 * fails open (routing/fail-open-breaker.ts): state that cannot be reached never fails the call.
 */
import { GatewayError } from '../../core/errors.js';
import { gatewayFailure, type AttemptOutcome } from '../attempt.js';
import { breakerKey, countsAsBreakerFailure } from '../routing/circuit-breaker.js';
import { recordAttempt } from '../routing/route-types.js';
import type { CircuitBreakerConfig } from '../config/index.js';
import type { TargetCall, TargetHandler, TargetStep } from './target-step.js';

export const breakerStep: TargetStep = (next) => (call) => {
  const cb = call.node.cb_config;
  return cb ? throughBreaker(next, call, cb) : next(call);
};

async function throughBreaker(
  next: TargetHandler,
  call: TargetCall,
  cb: CircuitBreakerConfig,
): Promise<AttemptOutcome> {
  const { run, path } = call;
  const provider = call.resolved.adapter.id;
  const { breaker } = run.deps.routing;
  const key = breakerKey({
    workspaceId: run.call.ctx.apiKey.workspace_id,
    provider,
    baseUrl: call.address,
    model: call.model,
    target: call.resolved.target,
  });
  const started = performance.now();
  // 'probe' after a cooldown: this call decides whether the circuit closes or opens again. The pass goes
  // back with the outcome: only calls let through by the circuit as it is now decide it.
  const pass = await breaker.canPass(key, cb);
  if (pass.state === 'open') {
    const skipped = gatewayFailure(
      new GatewayError('circuit_open', `The circuit of ${provider} at ${path || 'the root'} is open`),
      'circuit_open',
    );
    recordAttempt(run, {
      path,
      provider,
      model: call.model,
      body: call.body,
      outcome: skipped,
      started,
      retry: call.retry,
    });
    return skipped;
  }
  const outcome = await next(call);
  if (!outcome.ok && countsAsBreakerFailure(outcome, cb)) {
    await breaker.recordFailure(key, cb, pass);
  } else if (outcome.ok || (outcome.reason !== 'client_gone' && outcome.reason !== 'config')) {
    // An answer, even a 4xx, shows the target is up.
    await breaker.recordSuccess(key, pass);
  } else if (pass.state === 'probe') {
    await breaker.releaseProbe(key, pass);
  }
  return outcome;
}
