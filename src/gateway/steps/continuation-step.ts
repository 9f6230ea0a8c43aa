/**
 * Continuing a streamed answer: when the client already holds part of it (an earlier target broke
 * mid-stream), this target is asked for the rest (routing/continuation.ts) and its chunks are rewritten
 * into the client's one stream. A continuation that restarts the answer and then diverges from what the
 * client has fails the call: the client's stream ends with the in-band error, never with a doubled text.
 */
import type { ChatCompletionChunk } from '../../core/openai-types.js';
import { GatewayError } from '../../core/errors.js';
import { withOverrides } from '../routing/overrides.js';
import { buildContinuation, type Continuation } from '../routing/continuation.js';
import { modelRequestOf, type RouteRun } from '../routing/route-types.js';
import { ForwardingSink, type AnswerChunk, type CallSink } from '../sink.js';
import type { AttemptOutcome } from '../attempt.js';
import type { TargetCall, TargetHandler, TargetStep } from './target-step.js';

class ContinuationSink extends ForwardingSink {
  constructor(
    next: CallSink,
    private readonly continuation: Continuation,
  ) {
    super(next);
  }

  override get gone(): boolean {
    return this.continuation.diverged || this.next.gone;
  }

  override chunk(chunk: AnswerChunk): Promise<void> | undefined {
    const rewritten = this.continuation.rewrite(chunk as ChatCompletionChunk);
    return rewritten ? this.next.chunk(rewritten, undefined) : undefined;
  }
}

/** The continuation of the client's partial answer on this call's target, or undefined when it has none. */
export function continuationFor(run: RouteRun, call: Pick<TargetCall, 'resolved' | 'model'>) {
  const delivered = run.call.sink;
  if (!delivered || delivered.written === 0 || !delivered.continuable) return undefined;
  return buildContinuation(modelRequestOf(run.call), {
    text: delivered.text.get(0) ?? '',
    identity: delivered.identity,
    provider: call.resolved.adapter.id,
    model: call.model,
  });
}

export const continuationStep: TargetStep = (next) => (call) => {
  const continuation = continuationFor(call.run, call);
  return continuation ? continueOn(next, call, continuation) : next(call);
};

async function continueOn(
  next: TargetHandler,
  call: TargetCall,
  continuation: Continuation,
): Promise<AttemptOutcome> {
  const outcome = await next({
    ...call,
    ...withOverrides(continuation, call.node),
    sink: new ContinuationSink(call.sink as CallSink, continuation),
  });
  if (!continuation.diverged) return outcome;
  const provider = call.resolved.adapter.id;
  const error = new GatewayError(
    'upstream_invalid_response',
    `${provider} started the answer over instead of continuing it, and its text differs from what was ` +
      'already sent: the answer cannot be completed',
  );
  return {
    ok: false,
    error,
    status: error.status,
    reason: 'stream_error',
    afterFirstByte: true,
    usage: outcome.usage,
    ttfbMs: outcome.ttfbMs,
    malformedChunks: outcome.malformedChunks,
  };
}
