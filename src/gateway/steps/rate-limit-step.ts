/**
 * Rate-limit policies (docs/rate-limits.md), the outermost step of every target's chain, model calls and
 * pass-through alike, so that every endpoint that reaches a model is governed by construction. Before the
 * call: the counters of every policy the target meets are charged at once (rate-limits/rate-limiter.ts),
 * or the call ends with the policy's 429, thrown past the router so that neither the config's retry (an
 * inner step) nor its fallback sees it. After the call: token reservations are settled to the answer's
 * usage — a stream's once its last chunk is in, before the client is told it ended; a pass-through's once
 * its body has been relayed. An answer that gave no usage is settled to an estimate (tokensWithoutUsage):
 * a pass-through's of the bytes that went both ways, a model call's of its input and of its answer's text
 * (a stream's counted as its chunks go by); a model call's stream cut mid-way to the larger of its usage
 * and that estimate, and a pass-through's stream its provider ended with an error event to the input it
 * reported and the larger of its output count and its answer's bytes (relayedTokens).
 */
import { answeredFromCache } from '../cache/response-cache.js';
import type { AttemptOutcome } from '../attempt.js';
import { readRelayedAnswer, type AnswerReader } from '../passthrough/relayed-answer.js';
import { AnswerTextCount, answerTextLength } from '../rate-limits/answer-text.js';
import { tokensWithoutUsage } from '../rate-limits/token-estimate.js';
import type { AttemptRecord, RateLimitAdmission, RateLimits } from '../pipeline-types.js';
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
  // A model stream's text, counted as it goes by, for an answer that gives no usage.
  const streamed =
    call.sink !== undefined && call.endpoint !== 'passthrough' ? new AnswerTextCount(call.sink) : undefined;
  let outcome: AttemptOutcome;
  try {
    outcome = await next(streamed ? { ...call, sink: streamed } : call);
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
        relayedTokens(
          read?.result(),
          run.call.passthrough?.body?.received ?? 0,
          answerIsText ? answerBytes : 0,
        ),
      ),
    );
    return outcome;
  }
  await limiter.settle(admission, tokensUsed(call, outcome, firstAttempt, streamed, admission.inputLength));
  return outcome;
}

/**
 * What the target's calls used: the usage of every answer a provider gave it, retries included (an answer
 * an output guardrail denied and a retry replaced was billed all the same); none for a cache hit or a
 * failure before any answer. The answer that ends the call, when it carries no usage, counts as an
 * estimate of its input and of its text (a stream's, as much as went by), as a pass-through's bytes do:
 * left at its reservation, which counts no output when the request set no limit on it, a provider (or a
 * model the client chose) that omits usage would take every token policy out of play. A stream cut
 * mid-way counts as the larger of the usage it reported and that estimate: its usage may be only what its
 * first event said (an Anthropic stream's `message_start`: its input and one output token), however much
 * text went out after.
 */
function tokensUsed(
  call: TargetCall,
  outcome: AttemptOutcome,
  firstAttempt: number,
  streamed: AnswerTextCount | undefined,
  inputLength: number | undefined,
): number | undefined {
  const { run } = call;
  const answered = !answeredFromCache(run.call.state.cacheStatus) && (outcome.ok || outcome.afterFirstByte);
  const cut = !outcome.ok && outcome.afterFirstByte;
  if (!answered || (outcome.usage && !cut)) return billedSince(run.attempts, firstAttempt, 0);
  // A pass-through's answer read whole (not relayed as it came, so not estimated as it goes): its
  // reservation stands unless an earlier answer gave usage.
  if (call.endpoint === 'passthrough') return billedSince(run.attempts, firstAttempt, undefined);
  const answerLength = streamed
    ? streamed.length
    : outcome.ok
      ? answerTextLength(call.endpoint, outcome.body)
      : 0;
  // The input as the call's reservation counted it (a model call's admission always carries it).
  const estimate = tokensWithoutUsage(inputLength ?? 0, answerLength);
  // The estimate stands for the usage this answer reported, which its attempt's record counts among the
  // billed when it has one.
  const reported = outcome.usage?.total_tokens ?? 0;
  return billedSince(run.attempts, firstAttempt, 0) + Math.max(0, estimate - reported);
}

/**
 * What a pass-through's relayed answer used: its usage; without one, the estimate of the bytes that went
 * both ways. A stream the provider ended with its own error event counts the input it reported and, as
 * output, the larger of the count it reported and the estimate of the answer's bytes: its count may be
 * only what its first event said (an Anthropic stream's `message_start`: one output token), the final one
 * never having come, however much went out after — as a model call's stream cut mid-way is settled.
 */
function relayedTokens(
  read: ReturnType<AnswerReader['result']>,
  requestBytes: number,
  answerBytes: number,
): number {
  const usage = read?.usage;
  if (!usage) return tokensWithoutUsage(requestBytes, answerBytes);
  if (!read.failure) return usage.total_tokens;
  return usage.total_tokens + Math.max(0, tokensWithoutUsage(0, answerBytes) - usage.completion_tokens);
}

/** The tokens of the provider answers recorded from `first` on; `none` when no answer had usage. */
function billedSince<None extends number | undefined>(
  attempts: readonly AttemptRecord[],
  first: number,
  none: None,
): number | None {
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
