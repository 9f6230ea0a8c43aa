/**
 * Continuing a streamed answer: when the client already holds part of it (an earlier target broke
 * mid-stream), this target is asked for the rest (routing/continuation.ts) and its chunks are rewritten
 * into the client's one stream. A continuation that restarts the answer and then diverges from what the
 * client has fails the call: the client's stream ends with the in-band error, never with a doubled text.
 */
import type { ChatCompletionChunk } from '../../core/openai-types.js';
import type { ModelRequest } from '../../providers/types.js';
import { GatewayError } from '../../core/errors.js';
import { buildContinuation, isContinuable, type Continuation } from '../routing/continuation.js';
import { modelRequestOf, type RoutedRequest, type RouteRun } from '../routing/route-types.js';
import { ForwardingSink, type AnswerChunk, type CallSink } from '../sink.js';
import type { AttemptOutcome } from '../attempt.js';
import type { TargetCall, TargetHandler, TargetStep } from './target-step.js';

/** Whether the client already holds part of this call's streamed answer: the call continues it (and
 * nothing may answer it that cannot be joined to what was sent: a cache hit, a native operation). */
export function continuesAStream(call: TargetCall): boolean {
  return (call.run.call.sink?.written ?? 0) > 0;
}

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

/** Whether the client holds part of a streamed answer that this target could take over, asked before the
 * target's steps run (the request as routed: a Responses request is still one). */
export function canTakeOver(run: RouteRun, request: RoutedRequest): boolean {
  const delivered = run.call.sink;
  if (!delivered || delivered.written === 0 || !delivered.continuable) return false;
  return isContinuable(modelRequestOf(request));
}

/**
 * The continuation of the client's partial answer on this call's target, or undefined when it has none.
 * It is built from the request as this step receives it: the target's, with its override_params, and
 * already translated to chat where an ingress step (messages, responses) translates it.
 */
function continuationFor(run: RouteRun, call: TargetCall) {
  const delivered = run.call.sink;
  if (!delivered || delivered.written === 0 || !delivered.continuable) return undefined;
  return buildContinuation(modelRequestOf(call), {
    text: delivered.text.get(0) ?? '',
    identity: delivered.identity,
    provider: call.resolved.adapter.id,
    model: call.model,
  });
}

/** The continuation's operation and body alone (the call it is spread into takes nothing else of it). */
function requestOf(continuation: Continuation): ModelRequest {
  return { endpoint: continuation.endpoint, body: continuation.body } as ModelRequest;
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
    ...requestOf(continuation),
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
