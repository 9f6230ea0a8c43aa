/**
 * The circuit breaker of a target (`cb_config`): an open circuit answers at once with `circuit_open`
 * (a fallback moves on); after the cooldown one call probes, and its outcome closes or reopens the
 * circuit. What counts as a failure and the key are in routing/circuit-breaker.ts. The runtime's breaker
 * fails open (routing/fail-open-breaker.ts): state that cannot be reached never fails the call.
 *
 * A call is judged once its answer has ended, as a model call's stream is (its attempt ends with the
 * stream): a pass-through's relayed body, which goes on after this step has returned its 200, is judged
 * when it ends — a failure when the provider ended it with its own error event of a status that counts
 * (passthrough/relayed-answer.ts), when it broke off or went silent; an answer when it ended well; no
 * verdict when the client left.
 */
import { GatewayError, ProviderError } from '../../core/errors.js';
import { gatewayFailure, type AttemptOutcome } from '../attempt.js';
import { readRelayedAnswer, type AnswerReader } from '../passthrough/relayed-answer.js';
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
  const judge = (final: AttemptOutcome) => {
    if (!final.ok && countsAsBreakerFailure(final, cb)) return breaker.recordFailure(key, cb, pass);
    // An answer, even a 4xx, shows the target is up.
    if (final.ok || (final.reason !== 'client_gone' && final.reason !== 'config')) {
      return breaker.recordSuccess(key, pass);
    }
    return pass.state === 'probe' ? breaker.releaseProbe(key, pass) : undefined;
  };
  const relay = outcome.relay;
  if (outcome.ok && relay && typeof relay.body !== 'string') {
    // The answer's reader taps the body first, so that a stream's last event has been read when it ends.
    const read = readRelayedAnswer(relay);
    relay.body = judgedAtEnd(relay.body as AsyncIterable<Uint8Array>, read, (end) => judge(end ?? outcome));
    return outcome;
  }
  await judge(outcome);
  return outcome;
}

/** A relayed body as it goes by; once it has ended, broken off or been left, `judge` with how it ended:
 * undefined when it ended well, else the failure it counts as. */
async function* judgedAtEnd(
  body: AsyncIterable<Uint8Array>,
  read: AnswerReader | undefined,
  judge: (end: AttemptOutcome | undefined) => Promise<void> | undefined,
): AsyncIterable<Uint8Array> {
  let ended = false;
  let broke: unknown;
  try {
    for await (const chunk of body) yield chunk;
    ended = true;
  } catch (err) {
    broke = err ?? new Error('unknown error');
    throw err;
  } finally {
    await judge(endOf(read?.result()?.failure, ended, broke));
  }
}

/** How a relayed body ended, for the breaker: the provider's own error when its stream reported one (what
 * came after it, a break or a silence, is only its consequence), as a model call's stream error is. */
function endOf(
  failure: ProviderError | undefined,
  ended: boolean,
  broke: unknown,
): AttemptOutcome | undefined {
  if (failure) return gatewayFailure(failure, 'stream_error');
  if (ended) return undefined;
  if (broke === undefined) {
    // The client left: no verdict on the target.
    return gatewayFailure(new GatewayError('request_timeout', 'The client went away'), 'client_gone');
  }
  if (broke instanceof GatewayError && broke.code === 'request_timeout')
    return gatewayFailure(broke, 'timeout');
  return gatewayFailure(
    new GatewayError('upstream_unreachable', `The answer broke off: ${(broke as Error).message}`),
    'stream_cut',
  );
}
