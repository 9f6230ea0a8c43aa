/**
 * A pass-through call through the same pipeline as a model call: the config's routing, retries, fallback
 * and breaker apply (passthrough step chain, steps/index.ts); the provider's answer is relayed as it came,
 * its body streamed; a failed answer's body has the target's credentials cut out. When the answer is JSON,
 * its `model` and its usage (in the provider's own shapes, read by its adapter) are recorded and priced.
 * A stream the provider ends with its own error event is recorded as that failure, with the usage its
 * events reported before it, also when the connection then breaks off (docs/api.md, Pass-through).
 */
import { GatewayError, ProviderError } from '../../core/errors.js';
import type { UpstreamRelay } from '../attempt.js';
import { callCost } from '../call-cost.js';
import type { CallContext } from '../call-context.js';
import type { GatewayDeps } from '../deps.js';
import { asCallError, callTtfbMs } from '../execute.js';
import type { CallSummary } from '../observer.js';
import { newRouteRun, route, type RouteResult } from '../router.js';
import { newRouteState, type PassthroughCall, type RouteState } from '../routing/route-types.js';
import { readRelayedAnswer, type AnswerReader } from './relayed-answer.js';

/** The client's side of a pass-through. */
export interface RelaySink {
  /** Relays the provider's answer as it is; resolves true once the whole body reached the client. */
  relay(answer: UpstreamRelay, state: RouteState): Promise<boolean>;
  fail(error: GatewayError | ProviderError, status: number, state: RouteState): void;
}

export async function executePassthrough(
  deps: GatewayDeps,
  call: { ctx: CallContext; passthrough: PassthroughCall },
  sink: RelaySink,
): Promise<void> {
  // Counted from its start to its record, as a model call is (execute.ts).
  deps.logWriter.callBegan();
  try {
    await relayCall(deps, call, sink);
  } finally {
    deps.logWriter.callDone();
  }
}

async function relayCall(
  deps: GatewayDeps,
  call: { ctx: CallContext; passthrough: PassthroughCall },
  sink: RelaySink,
): Promise<void> {
  const { ctx, passthrough } = call;
  const state = newRouteState();
  const run = newRouteRun(deps, {
    ctx,
    endpoint: 'passthrough',
    chain: deps.routing.passthroughChain,
    body: {},
    stream: false,
    sink: undefined,
    state,
    passthrough,
  });
  let result: RouteResult | undefined;
  let failure: unknown;
  try {
    result = await route(run);
  } catch (err) {
    failure = err;
  }

  const outcome = result?.outcome;
  let status: number;
  let error: GatewayError | ProviderError | undefined;
  let answer: ReturnType<AnswerReader['result']>;
  const relay = outcome?.relay;
  if (relay) {
    const read = readRelayedAnswer(relay);
    const broke = watchBody(relay);
    const whole = await sink.relay(relay, state);
    answer = read?.result();
    status = relay.status;
    // The provider ended its stream with an error of its own, in the 200 it had sent: the call failed
    // with that error and the status it stands for, as a model call on the same stream does — also when
    // the connection then broke off or went silent, which came after the provider's own word.
    const streamFailure = answer?.failure;
    if (!outcome.ok) error = outcome.error;
    else if (streamFailure && (whole || broke.error !== undefined)) {
      error = streamFailure;
      status = streamFailure.status;
    } else if (broke.error !== undefined) {
      // The provider's answer broke off (or went silent too long): the client's connection is cut too
      // (its side reads as gone).
      error =
        broke.error instanceof GatewayError
          ? broke.error
          : new GatewayError(
              'upstream_unreachable',
              `${state.provider ?? 'The provider'}'s answer broke off before its end: ${(broke.error as Error).message}`,
            );
      status = error.status;
    } else if (!whole) {
      status = ctx.signal.aborted ? 499 : status;
      error = new GatewayError(
        'upstream_unreachable',
        'The response was cut before the whole body was relayed',
      );
    }
  } else {
    error = outcome && !outcome.ok ? outcome.error : asCallError(deps, ctx, failure);
    status =
      ctx.signal.aborted || (outcome && !outcome.ok && outcome.reason === 'client_gone') ? 499 : error.status;
    sink.fail(error, status, state);
  }

  const requestBody = requestBodyForLog(passthrough);
  // The model the provider says answered, else the one the request names: in its body, else its path.
  const model = answer?.model ?? bodyModel(requestBody) ?? modelOfPath(passthrough.path);
  state.cost = callCost(deps.prices, run.attempts, {
    provider: state.provider,
    model,
    usage: answer?.usage,
    failed: answer?.failure !== undefined,
  });
  const summary: CallSummary = {
    ctx,
    endpoint: 'passthrough',
    stream: false,
    state,
    status,
    model,
    usage: answer?.usage,
    ttfbMs: callTtfbMs(ctx.startedAt, run.attempts, outcome),
    endedAt: performance.now(),
    error,
    malformedChunks: 0,
    requestBody,
    responseBody: null,
    responseText: undefined,
    attempts: run.attempts,
    hooks: undefined,
    hooksText: undefined,
  };
  for (const observer of deps.observers) observer.callEnded(summary);
}

/** Notes an error of the relayed body's source (the provider's answer breaking off) as it goes by. */
function watchBody(relay: UpstreamRelay): { error: unknown } {
  const seen: { error: unknown } = { error: undefined };
  const body = relay.body;
  if (typeof body === 'string') return seen;
  relay.body = (async function* watched() {
    try {
      yield* body;
    } catch (err) {
      seen.error = err ?? new Error('unknown error');
      throw err;
    }
  })();
  return seen;
}

/** The `model` a pass-through's JSON body names. */
function bodyModel(body: unknown): string | undefined {
  const model = (body as { model?: unknown } | null)?.model;
  return typeof model === 'string' ? model : undefined;
}

function requestBodyForLog(passthrough: PassthroughCall): unknown {
  const whole = passthrough.body?.whole;
  if (!whole || !String(passthrough.headers['content-type'] ?? '').includes('json')) return null;
  try {
    return JSON.parse(Buffer.from(whole).toString('utf8'));
  } catch {
    return { bytes: whole.byteLength };
  }
}

/**
 * The model a pass-through's path names, for an answer that names none (Bedrock's Converse and InvokeModel
 * answers): `/model/{id}/…` (Bedrock, the id URL-encoded or not), `…/models/{name}:…` (Gemini, Vertex AI).
 */
function modelOfPath(path: string): string | null {
  const match = /\/model\/([^/?]+)\/|\/models\/([^/:?]+)[:?/]?/.exec(path);
  const named = match?.[1] ?? match?.[2];
  if (!named) return null;
  try {
    return decodeURIComponent(named);
  } catch {
    return named;
  }
}
