/**
 * The one entry of every model call: `execute(deps, call, sink)`. Routes, batch workers and the gateway's
 * own internal calls (an embedding for the semantic cache, a model-judged guardrail) build a CallContext
 * (call-context.ts) and a sink (sink.ts), and call this. It routes the call through the config's target
 * tree (router.ts, each target through the step chain of steps/), tells the sink how it ended, and hands
 * the call's summary to the observers (the log, later metrics and traces).
 */
import { GatewayError, ProviderError } from '../core/errors.js';
import { longerThan, METADATA_LIMITS } from '../core/metadata-limits.js';
import type { EndpointKind, ModelRequest } from '../providers/types.js';
import type { AttemptOutcome } from './attempt.js';
import type { CallContext } from './call-context.js';
import { HEADERS, type RequestContext } from './context.js';
import { DeliveredStream } from './delivered-stream.js';
import type { GatewayDeps } from './deps.js';
import { callCost } from './call-cost.js';
import { asksForStream, ENDPOINTS } from './endpoints.js';
import type { CallSummary, SummaryContext } from './observer.js';
import type { AttemptRecord, RoutedKind, RoutedRequest, TargetHandler } from './pipeline-types.js';
import { refusePromptTargets } from './prompts/prompt-targets.js';
import { newRouteRun, route, type RouteResult, type RoutedCall } from './router.js';
import { newRouteState, type RouteState } from './routing/route-types.js';
import type { CallSink } from './sink.js';

/** One model call: its operation and validated body, told apart by `endpoint`, and whose call it is. */
export type ModelCall = ModelRequest & {
  ctx: CallContext;
  /** What the answer's headers report; the caller's sink may read it as the call goes (streams). */
  state?: RouteState;
  /** The JSON text `body` was parsed from, when `body` is the client's body as parsed. */
  bodyText?: string;
};

export interface CallResult {
  outcome: AttemptOutcome | undefined;
  /** Set when the call failed. */
  error: GatewayError | ProviderError | undefined;
  status: number;
  state: RouteState;
}

export async function execute(deps: GatewayDeps, call: ModelCall, sink: CallSink): Promise<CallResult> {
  // Counted from its start to its record: a stop's final writes wait for the calls still running to be
  // recorded (a call the stop cut ends a few turns of the loop after its connection was destroyed). In
  // this one async function, not around a second: a call waiting on its provider holds one frame less.
  deps.logWriter.callBegan();
  try {
    const { endpoint, body } = call;
    const ctx = withEndUser(call.ctx, call);
    const state = call.state ?? newRouteState();
    const stream = asksForStream(call);
    const delivered = stream
      ? new DeliveredStream(sink, deps.settings.streamContinuationMaxChars)
      : undefined;
    const api = ENDPOINTS[endpoint].api;
    // Usage is asked of OpenAI's streaming operations; a Messages stream always reports it.
    const request =
      stream && (call.endpoint === 'chat' || call.endpoint === 'completions') ? withUsageAsked(call) : call;
    const run = newRouteRun(
      deps,
      routedCall(request, ctx, deps.routing.modelChain, stream, delivered, state, call.bodyText),
    );
    let result: RouteResult | undefined;
    let failure: unknown;
    try {
      // The gateway's own option, refused in strict mode on every OpenAI endpoint: the chat schema names it,
      // the others let it through as an unknown key. Anthropic's Messages API has it as its own.
      const fields: Readonly<Record<string, unknown>> = body;
      if (fields.thinking !== undefined && ctx.strictCompat && api === 'openai') {
        throw new GatewayError(
          'unsupported_parameter',
          'thinking needs strict_compat_compliance set to false (in the config, or the ' +
            `${HEADERS.strictCompat} header)`,
          { param: 'thinking' },
        );
      }
      // Only a prompt completion runs prompt_id targets (it expands them before calling): refused elsewhere.
      refusePromptTargets(ctx.config);
      result = await route(run);
    } catch (err) {
      failure = err;
    }

    const outcome = result?.outcome;
    // Known before a JSON answer goes out, so its headers carry it; a stream's headers went out before.
    state.cost = callCost(deps.prices, run.attempts);
    let status: number;
    let error: GatewayError | ProviderError | undefined;
    let responseBody: unknown;
    // The answering target's hooks: an earlier target's ran on a request this one was not sent.
    const hooks = run.hooks?.path === state.targetPath ? run.hooks : undefined;
    // The answer a hooks step sent (another target's, after a fallback, is not).
    const hooked =
      hooks?.answer && outcome?.ok && hooks.answer.sent === outcome.body ? hooks.answer : undefined;
    if (outcome?.ok) {
      status = outcome.status;
      if (delivered) {
        delivered.end();
        responseBody = deliveredBody(delivered);
      } else {
        // With hooks, the answer without its hook_results, which the record keeps in a column of their own.
        responseBody = hooked ? hooked.body : outcome.body;
        sink.answer({
          status,
          body: outcome.body,
          rawText: outcome.rawText,
          headers: outcome.upstreamHeaders,
        });
      }
    } else {
      error = outcome ? outcome.error : asCallError(deps, ctx, failure);
      status =
        (outcome && !outcome.ok && outcome.reason === 'client_gone') || ctx.signal.aborted
          ? 499
          : error.status;
      // A stream that broke part way: the text the client was sent, beside the error.
      responseBody =
        delivered && delivered.text.size > 0
          ? { ...deliveredBody(delivered), ...error.toBody() }
          : error.toBody();
      sink.fail(error, status);
    }
    const endedAt = performance.now();

    // A request a hook rewrote (PII redacted) is recorded as the provider got it.
    const requestBody = hooks?.requestBody ?? result?.requestBody ?? body;
    const summary: CallSummary = {
      ctx,
      endpoint,
      stream,
      state,
      status,
      model:
        (outcome?.ok ? outcome.model : undefined) ?? (typeof body.model === 'string' ? body.model : null),
      usage: outcome?.usage,
      ttfbMs: callTtfbMs(ctx.startedAt, run.attempts, outcome, delivered),
      endedAt,
      error,
      malformedChunks: outcome?.malformedChunks ?? 0,
      requestBody,
      requestText: requestBody === body ? call.bodyText : undefined,
      responseBody,
      responseText: outcome?.ok ? (hooked ? hooked.text : outcome.rawText) : undefined,
      attempts: run.attempts,
      hooks: hooks?.results,
      hooksText: hooks?.resultsText,
      // Every target's and attempt's, not the answering one's only: a judge their hooks asked is traced
      // under their spans.
      tracedHooks: run.hooks?.traced,
    };
    // A failure the caller holds back to run the call again (a rate-limit refusal a batch line or a
    // background response waits out) is no end of the call: the run that ends it leaves the record, and
    // the refusal is only measured and traced.
    if (sink.heldBack === true) {
      for (const observer of deps.observers) observer.callHeldBack?.(summary);
      return { outcome, error, status, state };
    }
    // Async hooks never delay the answer (the sink has it); the record waits for their results.
    if (run.hooks && run.hooks.pending.length > 0) {
      await Promise.allSettled(run.hooks.pending);
      summary.tracedHooks = run.hooks.traced;
    }
    for (const observer of deps.observers) observer.callEnded(summary);
    return { outcome, error, status, state };
  } finally {
    deps.logWriter.callDone();
  }
}

/**
 * A model call as routed: field by field, in the order of a pass-through's, so that every routed call has
 * one shape, and without the caller's other fields (its body's text).
 */
function routedCall<K extends RoutedKind>(
  { endpoint, body }: RoutedRequest<K>,
  ctx: CallContext,
  chain: TargetHandler,
  stream: boolean,
  sink: DeliveredStream | undefined,
  state: RouteState,
  bodyText: string | undefined,
): RoutedCall<K> {
  return { ctx, endpoint, chain, body, stream, bodyText, sink, state, passthrough: undefined };
}

/**
 * A call's time to first byte, from its start: a stream's to its first chunk sent, which may have come
 * from an attempt before the one that finished it; a JSON answer's to the answering attempt's first byte,
 * after any attempts before it. An attempt's own `ttfbMs` counts from that attempt's start.
 */
export function callTtfbMs(
  startedAt: number,
  attempts: readonly AttemptRecord[],
  outcome: AttemptOutcome | undefined,
  delivered?: DeliveredStream,
): number | null {
  if (delivered?.firstChunkAt !== undefined) return delivered.firstChunkAt - startedAt;
  const last = attempts.at(-1);
  if (!outcome || outcome.ttfbMs === null || !last) return null;
  return last.started - startedAt + outcome.ttfbMs;
}

/** The record's response body of a stream: the text each choice was sent. */
function deliveredBody(delivered: DeliveredStream): { choices: Array<{ index: number; content: string }> } {
  return { choices: [...delivered.text].map(([index, content]) => ({ index, content })) };
}

/** The error a failed call answers with: its own, or an internal error (logged) for anything else. */
export function asCallError(
  deps: GatewayDeps,
  ctx: SummaryContext,
  failure: unknown,
): GatewayError | ProviderError {
  if (failure instanceof GatewayError || failure instanceof ProviderError) return failure;
  deps.logger.error({ err: failure, traceId: ctx.traceId }, 'model call failed');
  return new GatewayError('internal_error', 'The gateway failed to handle the request', { cause: failure });
}

/**
 * The context `build` makes for a call, or undefined when it could not be made (a config or virtual key
 * that does not resolve): the call is then refused through the sink and recorded (refuseCall). A context
 * built at once comes back at once, with no promise.
 */
export function contextOrRefuse(
  deps: GatewayDeps,
  call: ModelRequest,
  sink: CallSink,
  request: RequestContext,
  how: { method: string; url: string },
  build: () => CallContext | Promise<CallContext>,
): CallContext | undefined | Promise<CallContext | undefined> {
  let built: CallContext | Promise<CallContext>;
  try {
    built = build();
  } catch (err) {
    return refuseContext(deps, call, sink, request, how, err);
  }
  if (!(built instanceof Promise)) return built;
  // Counted as a call under way while its context is built (a key or config read from the store): refused,
  // it is recorded; built, it goes on to `execute`, counted there.
  deps.logWriter.callBegan();
  return built.then(
    (ctx) => {
      deps.logWriter.callDone();
      return ctx;
    },
    (err: unknown) => {
      const refused = refuseContext(deps, call, sink, request, how, err);
      deps.logWriter.callDone();
      return refused;
    },
  );
}

/** A call whose context could not be built, refused: a function of its own, not a closure every call
 * would make. */
function refuseContext(
  deps: GatewayDeps,
  call: ModelRequest,
  sink: CallSink,
  request: RequestContext,
  how: { method: string; url: string },
  err: unknown,
): undefined {
  // Built only here: a call that is not refused never needs it.
  const refusal: SummaryContext = { ...request, ...how };
  refuseCall(deps, { ...call, ctx: refusal }, err, sink);
  return undefined;
}

/**
 * A call refused before it had a context (its config could not be resolved): answered through the sink
 * and recorded like any other.
 */
export function refuseCall(
  deps: GatewayDeps,
  call: ModelRequest & { ctx: SummaryContext },
  failure: unknown,
  sink: CallSink,
): void {
  const { ctx, body } = call;
  const error = asCallError(deps, ctx, failure);
  const status = ctx.signal.aborted ? 499 : error.status;
  const state = newRouteState();
  sink.fail(error, status);
  const summary: CallSummary = {
    ctx,
    endpoint: call.endpoint,
    stream: asksForStream(call),
    state,
    status,
    model: typeof body.model === 'string' ? body.model : null,
    usage: undefined,
    ttfbMs: null,
    endedAt: performance.now(),
    error,
    malformedChunks: 0,
    requestBody: body,
    responseBody: error.toBody(),
    responseText: undefined,
    attempts: [],
    hooks: undefined,
    hooksText: undefined,
  };
  for (const observer of deps.observers) observer.callEnded(summary);
}

/**
 * A request refused before it was a call (its body did not validate): answered through the sink and
 * recorded with its body as the client sent it, so that every request answered leaves its record and its
 * metrics, as a call refused for its config does.
 */
export function refuseRequest(
  deps: GatewayDeps,
  endpoint: EndpointKind,
  body: unknown,
  sink: CallSink,
  request: RequestContext,
  how: { method: string; url: string },
  failure: unknown,
): void {
  const received = typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {};
  // Recorded as received; it goes nowhere else.
  const call = { endpoint, body: received } as ModelRequest;
  refuseCall(deps, { ...call, ctx: { ...request, ...how } }, failure, sink);
}

/**
 * The request of a stream as sent upstream. Usage is always asked of the provider, so every streamed call is
 * recorded with its tokens; the codec passes the usage chunk to the client only when it asked for it.
 */
function withUsageAsked<K extends 'chat' | 'completions'>({
  endpoint,
  body,
}: ModelRequest<K>): ModelRequest<K> {
  return { endpoint, body: { ...body, stream_options: { ...body.stream_options, include_usage: true } } };
}

/**
 * The call's metadata with `_user` from the body's end user (`user`; a Messages request's
 * `metadata.user_id`), as Portkey records it, unless the metadata names one already: the user is then
 * found in the logs, grouped by in analytics and met by policies and conditional routing.
 */
function withEndUser(ctx: CallContext, call: ModelRequest): CallContext {
  if (ctx.metadata._user !== undefined) return ctx;
  const body = call.body as { user?: unknown; metadata?: { user_id?: unknown } | null };
  const user = call.endpoint === 'messages' ? body.metadata?.user_id : body.user;
  // A value longer than metadata takes is not cut down to a different user.
  if (typeof user !== 'string' || user === '' || longerThan(user, METADATA_LIMITS.valueLength)) return ctx;
  return { ...ctx, metadata: { ...ctx.metadata, _user: user } };
}
