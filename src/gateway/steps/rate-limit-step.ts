/**
 * Rate-limit policies (docs/rate-limits.md), the outermost step of every target's chain, model calls and
 * pass-through alike, so that every endpoint that reaches a model is governed by construction. Before the
 * call: the counters of every policy the target meets are charged at once (rate-limits/rate-limiter.ts),
 * or the call ends with the policy's 429, thrown past the router so that neither the config's retry (an
 * inner step) nor its fallback sees it. After the call: token reservations are settled to the answer's
 * usage — a stream's once its last chunk is in, before the client is told it ended; a pass-through's once
 * its body has been relayed, to an estimate of the bytes that went both ways when the answer gave no usage.
 */
import { answeredFromCache } from '../cache/response-cache.js';
import type { AttemptOutcome } from '../attempt.js';
import { readRelayedAnswer } from '../passthrough/relayed-answer.js';
import { passthroughTokens } from '../rate-limits/token-estimate.js';
import type { AttemptRecord, RateLimitAdmission, RateLimits, RouteRun } from '../pipeline-types.js';
import type { TargetCall, TargetHandler, TargetStep } from './target-step.js';

export const rateLimitStep: TargetStep = (next) => (call) => {
  const limiter = call.run.deps.routing.rateLimits;
  const admitting = limiter.admit(call);
  // No policy can meet the call (the common case): straight on, without a turn of the microtask queue.
  if (admitting === undefined) return next(call);
  return admitted(next, call, limiter, admitting);
};

async function admitted(
  next: TargetHandler,
  call: TargetCall,
  limiter: RateLimits,
  admitting: Promise<RateLimitAdmission | undefined>,
): Promise<AttemptOutcome> {
  const admission = await admitting;
  if (!admission) return next(call);
  return settled(next, call, limiter, admission);
}

async function settled(
  next: TargetHandler,
  call: TargetCall,
  limiter: RateLimits,
  admission: RateLimitAdmission,
): Promise<AttemptOutcome> {
  const { run } = call;
  const firstAttempt = run.attempts.length;
  let outcome: AttemptOutcome;
  try {
    outcome = await next(call);
  } catch (error) {
    await limiter.settle(admission, billedSince(run.attempts, firstAttempt, undefined));
    throw error;
  }
  const relay = outcome.relay;
  if (relay && typeof relay.body !== 'string') {
    const read = readRelayedAnswer(relay);
    const answerIsText = TEXT_ANSWER.test(relay.headers['content-type'] ?? '');
    relay.body = settleAfter(relay.body as AsyncIterable<Uint8Array>, (answerBytes) =>
      limiter.settle(
        admission,
        read?.result()?.usage?.total_tokens ??
          passthroughTokens(run.call.passthrough?.body?.received ?? 0, answerIsText ? answerBytes : 0),
      ),
    );
    return outcome;
  }
  await limiter.settle(admission, tokensUsed(outcome, run, firstAttempt));
  return outcome;
}

/**
 * What the target's calls used: the usage of every answer a provider gave it, retries included (an answer
 * an output guardrail denied and a retry replaced was billed all the same); none for a cache hit or a
 * failure before any answer. Unknown — the reservation stands — when the answer that ends the call
 * carries no usage and no earlier answer did.
 */
function tokensUsed(outcome: AttemptOutcome, run: RouteRun, firstAttempt: number): number | undefined {
  const answerWithoutUsage =
    !answeredFromCache(run.call.state.cacheStatus) &&
    !outcome.usage &&
    (outcome.ok || outcome.afterFirstByte);
  return billedSince(run.attempts, firstAttempt, answerWithoutUsage ? undefined : 0);
}

/** The tokens of the provider answers recorded from `first` on; `none` when no answer had usage. */
function billedSince(
  attempts: readonly AttemptRecord[],
  first: number,
  none: number | undefined,
): number | undefined {
  let billed: number | undefined;
  for (let i = first; i < attempts.length; i++) {
    const { outcome, cacheStatus } = attempts[i];
    if (outcome.usage && !answeredFromCache(cacheStatus)) billed = (billed ?? 0) + outcome.usage.total_tokens;
  }
  return billed ?? none;
}

/**
 * The answers of a pass-through whose bytes count towards its estimate when they give no usage: text
 * (JSON, server-sent events, plain text) and Bedrock's event-stream. A binary answer (a file's content,
 * speech) is no model output to count as tokens.
 */
const TEXT_ANSWER = /json|^text\/|event-?stream/i;

/** The body as it is relayed; once it has ended (or the client left), `settle` with the bytes that went. */
async function* settleAfter(
  body: AsyncIterable<Uint8Array>,
  settle: (bytes: number) => Promise<void>,
): AsyncIterable<Uint8Array> {
  let bytes = 0;
  try {
    for await (const chunk of body) {
      bytes += chunk.byteLength;
      yield chunk;
    }
  } finally {
    await settle(bytes);
  }
}
