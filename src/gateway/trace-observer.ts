/**
 * Traces: every call's summary written as OpenTelemetry spans (observability/tracing.ts), following the
 * GenAI semantic conventions. The request is a span of its own (`chat gpt-4o`), each call to a provider a
 * CLIENT span under it (a retry or a fallback is another such span, marked so), a cache answer or a skip
 * by an open circuit an INTERNAL span, and each hook an INTERNAL span. A call the gateway makes through
 * its own routing for a call it serves (a judge, an embedding: CallContext.withinSpanId) is an INTERNAL
 * span inside the span that asked, not a SERVER span of its own. A run of a batch line or a
 * background response that the rate limits refused, and that runs again once the policy has room, is
 * written too, marked as held back (heldBackSpans); a batch line's run that failed and that the line runs
 * again for is written as failed, marked as run again (runsAgainSpans).
 */
import type { SpanRecord } from '../observability/span-record.js';
import type { TraceExporter } from '../observability/tracing.js';
import { otelSpanId, otelTraceId } from '../observability/tracing.js';
import { newSpanId } from './context.js';
import { answeredFromCache } from './cache/response-cache.js';
import { RateLimitExceededError } from './rate-limits/rate-limit-error.js';
import { refusalWaitMs } from './rate-limits/refusal-wait.js';
import { attemptCost } from './call-cost.js';
import { deniedBeforeCall, reachedProvider } from './reached-provider.js';
import type { HookResult, TracedHookRun } from './hooks/hook-result-types.js';
import type { AttemptRecord, CallObserver, CallSummary } from './pipeline-types.js';
import type { PriceTable } from '../observability/pricing/price-table.js';

/**
 * `gen_ai.operation.name` of each endpoint: the conventions' value where one applies (they require it
 * then), OpenAI's Responses API and Anthropic's Messages API being chat as Chat Completions is; the
 * endpoint's own name for the others (a Messages token count, a pass-through).
 */
const OPERATIONS: Readonly<Record<string, string>> = {
  chat: 'chat',
  completions: 'text_completion',
  embeddings: 'embeddings',
  messages: 'chat',
  responses: 'chat',
};

/** `gen_ai.provider.name` of the providers the conventions name; the others keep the gateway's id. */
const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  bedrock: 'aws.bedrock',
  'vertex-ai': 'gcp.vertex_ai',
  google: 'gcp.gemini',
  'azure-openai': 'azure.ai.openai',
  'azure-ai': 'azure.ai.inference',
  'mistral-ai': 'mistral_ai',
  'x-ai': 'x_ai',
  'perplexity-ai': 'perplexity',
};

type Attributes = SpanRecord['attributes'];

export function createTraceObserver(exporter: TraceExporter, prices: PriceTable): CallObserver {
  return {
    callEnded(summary) {
      const traceId = otelTraceId(summary.ctx.traceId);
      if (!exporter.sampled(traceId)) return;
      exporter.export(callSpans(summary, prices, summary.endedAt, traceId));
    },
    callHeldBack(summary) {
      const traceId = otelTraceId(summary.ctx.traceId);
      if (!exporter.sampled(traceId)) return;
      exporter.export(
        waitedOut(summary)
          ? heldBackSpans(summary, prices, traceId)
          : runsAgainSpans(summary, prices, traceId),
      );
    },
  };
}

/**
 * The spans of a run held back to be made again (CallObserver.callHeldBack: a rate-limit refusal a batch
 * line or a background response waits out), in the trace of the run that will end the call. The run's
 * own span says why it ended and for how long the call waits: `gateway.held_back.reason` (the refusal's
 * code), `gateway.held_back.wait_ms` and, for a policy's limit, `gateway.rate_limit.policy_id`. Its
 * status is left unset and it has no `error.type`: the refusal is waited out, not the call's failure
 * (OpenTelemetry's conventions record no error that was retried), which the span of the run that ends
 * the call records, if it fails. Written only here, apart from every call's path.
 */
export function heldBackSpans(
  summary: CallSummary,
  prices: PriceTable,
  traceId = otelTraceId(summary.ctx.traceId),
): SpanRecord[] {
  const spans = callSpans(summary, prices, summary.endedAt, traceId);
  const run = spans[0];
  const { error } = summary;
  run.error = undefined;
  run.attributes['error.type'] = undefined;
  run.attributes['gateway.held_back.reason'] = error ? String(error.code ?? error.type) : undefined;
  run.attributes['gateway.held_back.wait_ms'] = error ? refusalWaitMs(error) : undefined;
  run.attributes['gateway.rate_limit.policy_id'] =
    error instanceof RateLimitExceededError ? error.policyId : undefined;
  return spans;
}

/** Whether a run held back is a rate-limit refusal its call waits out (heldBackSpans), not a failure. */
function waitedOut({ error }: CallSummary): boolean {
  return error !== undefined && refusalWaitMs(error) !== undefined;
}

/**
 * The spans of a run held back because it failed, and that runs again (CallObserver.callHeldBack: a batch
 * line's call the gateway failed before any provider was called, the store failing as it was routed). It
 * did fail: its span is a failed call's, its status ERROR and its `error.type` the gateway's, and it is
 * marked `gateway.runs_again` (its call is made again, and the run that ends it is written as any call is).
 */
export function runsAgainSpans(
  summary: CallSummary,
  prices: PriceTable,
  traceId = otelTraceId(summary.ctx.traceId),
): SpanRecord[] {
  const spans = callSpans(summary, prices, summary.endedAt, traceId);
  spans[0].attributes['gateway.runs_again'] = true;
  return spans;
}

/** The spans of one call; `endedAt` is performance.now() when it ended. */
export function callSpans(
  summary: CallSummary,
  prices: PriceTable,
  endedAt: number,
  traceId = otelTraceId(summary.ctx.traceId),
): SpanRecord[] {
  const { ctx, state, error } = summary;
  const requestSpanId = otelSpanId(ctx.spanId);
  const epoch = (t: number) => performance.timeOrigin + t;
  const operation = OPERATIONS[summary.endpoint] ?? summary.endpoint;
  const body = (summary.requestBody ?? {}) as Record<string, unknown>;
  const requestModel = typeof body.model === 'string' ? modelText(body.model) : undefined;

  const errorType = error ? String(error.code ?? error.type) : undefined;
  const number = (value: unknown) => (typeof value === 'number' ? value : undefined);
  const usage = summary.usage;
  // One object of a fixed shape, the attributes without a value left undefined (the encoders skip them):
  // built at once, it does not grow a property store key by key.
  const attributes: Attributes = {
    'gen_ai.operation.name': operation,
    'http.request.method': ctx.method,
    'http.response.status_code': summary.status,
    'gateway.trace_id': ctx.traceId,
    'gateway.retry_count': state.retryCount,
    'gateway.stream': summary.stream,
    'gen_ai.provider.name': providerName(state.provider),
    'gen_ai.request.model': requestModel,
    'gen_ai.response.model': error ? undefined : modelText(summary.model),
    'gen_ai.request.max_tokens':
      number(body.max_completion_tokens) ?? number(body.max_tokens) ?? number(body.max_output_tokens),
    'gen_ai.request.temperature': number(body.temperature),
    'gen_ai.request.top_p': number(body.top_p),
    'gen_ai.request.choice.count': number(body.n),
    'gen_ai.usage.input_tokens': usage?.prompt_tokens,
    'gen_ai.usage.output_tokens': usage?.completion_tokens,
    'gateway.workspace_id': ctx.apiKey.workspace_id ?? undefined,
    'gateway.target': state.targetPath ?? undefined,
    'gateway.cache_status': state.cacheStatus ?? undefined,
    'gateway.cost_usd': state.cost ?? undefined,
    'error.type': errorType,
  };
  // A call the gateway made for a call it serves (a judge, an embedding) runs inside one of that call's
  // spans, not as a request of its own from a client.
  const within = ctx.withinSpanId;
  const request: SpanRecord = {
    name: ctx.spanName ?? spanName(operation, requestModel),
    kind: within === undefined ? 'server' : 'internal',
    traceId,
    spanId: requestSpanId,
    parentSpanId:
      within !== undefined
        ? otelSpanId(within)
        : ctx.parentSpanId === null
          ? undefined
          : otelSpanId(ctx.parentSpanId),
    parentIsRemote: within === undefined && ctx.parentSpanId !== null,
    startMs: epoch(ctx.startedAt),
    endMs: epoch(endedAt),
    attributes,
    error: errorType,
  };
  const spans = [request];
  const firstPath = summary.attempts[0]?.path;
  for (const attempt of summary.attempts) {
    spans.push(attemptSpan(attempt, { traceId, parent: requestSpanId, operation, firstPath, prices, epoch }));
  }
  spans.push(...hookSpans(summary, { traceId, parent: requestSpanId, epoch, endedAt }));
  return spans;
}

interface SpanPlace {
  traceId: string;
  parent: string;
  epoch: (t: number) => number;
}

function attemptSpan(
  attempt: AttemptRecord,
  place: SpanPlace & { operation: string; firstPath: string | undefined; prices: PriceTable },
): SpanRecord {
  const { outcome } = attempt;
  const spanId = otelSpanId(attempt.spanId);
  const startMs = place.epoch(attempt.started);
  const endMs = place.epoch(attempt.ended);
  const fallback = attempt.path !== place.firstPath;
  const span = (
    name: string,
    kind: SpanRecord['kind'],
    error: string | undefined,
    attributes: Attributes,
  ): SpanRecord => ({
    name,
    kind,
    traceId: place.traceId,
    spanId,
    parentSpanId: place.parent,
    parentIsRemote: false,
    startMs,
    endMs,
    attributes,
    error,
  });
  const provider = providerName(attempt.provider);
  // A cache answer or a target skipped without a call: where and when in the walk, nothing of a model.
  const skipped = (name: string, error: string | undefined) =>
    span(name, 'internal', error, {
      'gen_ai.provider.name': provider,
      'gateway.target': attempt.path,
      'gateway.retry': attempt.retry,
      'gateway.fallback': fallback,
    });
  if (answeredFromCache(attempt.cacheStatus) && outcome.ok) return skipped('cache hit', undefined);
  if (!outcome.ok && (outcome.reason === 'circuit_open' || outcome.reason === 'config')) {
    return skipped(outcome.reason === 'circuit_open' ? 'circuit open' : 'target refused', outcome.reason);
  }
  // Denied by a before-request hook: no provider was called (one denied after its answer was).
  if (!outcome.ok && deniedBeforeCall(outcome)) {
    return skipped('hooks denied', outcome.reason);
  }
  const errorType = outcome.ok ? undefined : outcome.reason;
  const usage = outcome.ok ? outcome.usage : undefined;
  const requestModel = modelText(attempt.model);
  return span(spanName(place.operation, requestModel), 'client', errorType, {
    'gen_ai.provider.name': provider,
    'gateway.target': attempt.path,
    'gateway.retry': attempt.retry,
    'gateway.fallback': fallback,
    'gen_ai.operation.name': place.operation,
    'gen_ai.request.model': requestModel,
    'gen_ai.response.model': outcome.ok ? (modelText(outcome.model) ?? requestModel) : undefined,
    'gen_ai.usage.input_tokens': usage?.prompt_tokens,
    'gen_ai.usage.output_tokens': usage?.completion_tokens,
    'http.response.status_code': outcome.ok ? outcome.status : outcome.status || undefined,
    'gateway.cost_usd': attemptCost(place.prices, attempt) ?? undefined,
    'error.type': errorType,
  });
}

/**
 * The spans of the answering target's hooks, and of every hook run that a call the gateway made was traced
 * under (a judge's: CallSummary.tracedHooks), whichever target or attempt it ran for, so that such a call's
 * parent is in the trace. Hooks report how long they took, not when they started: a before-request hook is
 * placed to end where the first call to a provider began (or the request ended, when it denied), an
 * after-request hook to start where the last call ended; a traced hook run, which knows when it began, is
 * written when it ran, under the span id its calls name.
 */
function hookSpans(summary: CallSummary, place: SpanPlace & { endedAt: number }): SpanRecord[] {
  const { hooks, tracedHooks } = summary;
  if (!hooks && !tracedHooks) return [];
  const calls = summary.attempts.filter((attempt) => reachedProvider(attempt.outcome));
  const beforeEnd = calls[0]?.started ?? place.endedAt;
  const afterStart = calls.at(-1)?.ended ?? place.endedAt;
  const span = (hook: HookResult, start: number, end: number, spanId = newSpanId()): SpanRecord => ({
    name: `hook ${hook.id}`,
    kind: 'internal',
    traceId: place.traceId,
    spanId,
    parentSpanId: place.parent,
    parentIsRemote: false,
    startMs: place.epoch(start),
    endMs: place.epoch(end),
    attributes: {
      'gateway.hook.id': hook.id,
      'gateway.hook.type': hook.type,
      'gateway.hook.event': hook.event,
      'gateway.hook.verdict': hook.verdict,
      'gateway.hook.deny': hook.deny,
      'gateway.hook.async': hook.async,
      'gateway.hook.checks': hook.checks.map((check) => check.id),
    },
    error: hook.deny ? 'hooks_failed' : undefined,
  });
  const spans: SpanRecord[] = [];
  if (hooks) {
    // A traced run is written below, the answering target's among them.
    for (const hook of hooks.before_request_hooks) {
      if (!isTraced(hook, tracedHooks)) spans.push(span(hook, beforeEnd - hook.execution_time, beforeEnd));
    }
    for (const hook of hooks.after_request_hooks) {
      if (!isTraced(hook, tracedHooks)) spans.push(span(hook, afterStart, afterStart + hook.execution_time));
    }
  }
  if (tracedHooks) {
    for (const { result, started, spanId } of tracedHooks) {
      spans.push(span(result, started, started + result.execution_time, spanId));
    }
  }
  return spans;
}

function isTraced(hook: HookResult, traced: readonly TracedHookRun[] | undefined): boolean {
  return traced !== undefined && traced.some((run) => run.result === hook);
}

/** Characters of a model name written in a span's name and attributes. */
const MAX_MODEL_TEXT = 256;

/**
 * A model name as spans carry it: its first MAX_MODEL_TEXT characters. A caller may name a model megabytes
 * long, and it would be in every span of the call, in an export request shared with other calls, which
 * collectors refuse past their size limit.
 */
function modelText(model: string | null | undefined): string | undefined {
  if (model === null || model === undefined) return undefined;
  if (model.length <= MAX_MODEL_TEXT) return model;
  const end = model.charCodeAt(MAX_MODEL_TEXT - 1);
  // Never half of a surrogate pair.
  return model.slice(0, end >= 0xd800 && end <= 0xdbff ? MAX_MODEL_TEXT - 1 : MAX_MODEL_TEXT);
}

function providerName(provider: string | null): string | undefined {
  if (provider === null) return undefined;
  return PROVIDER_NAMES[provider] ?? provider;
}

/** `{operation} {model}`, or the operation alone when no model was named. */
function spanName(operation: string, model: string | undefined): string {
  return model ? `${operation} ${model}` : operation;
}
