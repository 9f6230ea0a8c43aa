/**
 * One call to one provider target: build the request with the adapter, send it, and either read the JSON
 * answer or relay the stream to the client. Deadlines: `timeoutMs` bounds the wait for the first byte
 * (and a whole non-streamed answer); in a stream, `idleTimeoutMs` bounds every silence between chunks,
 * and until the stream's first chunk reaches the sink, `firstChunkBy` (the request's deadline) too.
 * The outcome says what happened in terms the router decides on: status, reason, and whether any byte of
 * this attempt already reached the client.
 */
import { performance } from 'node:perf_hooks';
import { createSseDecoder } from '../providers/shared/sse-decoder.js';
import { operationOf, streamTranslatorOf } from '../providers/registry.js';
import { CallAbort, type AbortSignalLike } from '../core/abort.js';
import type { Usage } from '../core/openai-types.js';
import { tooLargeFailure, UpstreamTooLarge, type UpstreamLimits } from '../core/upstream-limits.js';
import type { AdapterRequest, FrameDecoder, StreamFailureReader, StreamOutput } from '../providers/types.js';
import { chunkModel, type AnswerChunk, type CallSink } from './sink.js';
import { GatewayError, ProviderError } from '../core/errors.js';
import type { ResolvedTarget } from './resolve-target.js';
import { refusedByPolicy } from './custom-host.js';
import { scrubSecrets, targetSecrets } from './scrub-secrets.js';
import type { UpstreamClient, UpstreamResponse } from './upstream.js';

export type FailureReason =
  | 'status'
  | 'connection'
  | 'timeout'
  | 'stream_error'
  | 'stream_cut'
  | 'invalid_response'
  | 'config'
  | 'client_gone'
  /** The target's circuit is open: the gateway skipped it without a call. */
  | 'circuit_open'
  /** A hook with `deny` failed: the call was not made, or its answer was withheld (446). */
  | 'hooks_denied';

export interface AttemptSuccess {
  ok: true;
  status: number;
  streamed: boolean;
  /** Non-streamed: the OpenAI-shaped body, and its exact text when it can be sent as it came. */
  body?: unknown;
  rawText?: string;
  usage: Usage | undefined;
  model: string | undefined;
  /** Streamed: the service tier its chunks named (the translator's), for the cost. */
  serviceTier?: string;
  upstreamHeaders: Record<string, string>;
  ttfbMs: number | null;
  malformedChunks: number;
  /** A pass-through answer: the provider's body, to be relayed as it is. */
  relay?: UpstreamRelay;
}

/** A provider's answer relayed without translation (pass-through). */
export interface UpstreamRelay {
  status: number;
  headers: Record<string, string>;
  /** The body as it arrives; a failed answer's body is read whole (and scrubbed of credentials). */
  body: AsyncIterable<Uint8Array> | string;
  /** Reads the usage of an answer (its JSON body, or a stream event's) in the target's provider's shapes (passthrough/relayed-answer.ts). */
  usageOf?: (answer: Record<string, unknown>) => Usage | undefined;
  /** The target's adapter's decoder of its provider's own stream framing (Bedrock's AWS event-stream), for
   * a stream that is not server-sent events. */
  frameDecoder?: (maxEventBytes?: number) => FrameDecoder;
  /** The most of one stream event the reader of the usage holds (GATEWAY_UPSTREAM_EVENT_MAX_BYTES); past
   * it, the reading stops and the stream is still relayed. */
  maxEventBytes?: number;
  /** The usage the answer's headers give, for a body that carries none. */
  headerUsage?: Usage | undefined;
  /** Reads the failure a stream event reports (the provider's error inside its 200), with the target's
   * credentials cut out of it (passthrough/relayed-answer.ts). */
  failureOf?: StreamFailureReader | undefined;
}

export interface AttemptFailure {
  ok: false;
  error: GatewayError | ProviderError;
  status: number;
  reason: FailureReason;
  /** Bytes of this attempt already reached the client: the answer can no longer be replaced silently. */
  afterFirstByte: boolean;
  usage: Usage | undefined;
  ttfbMs: number | null;
  malformedChunks: number;
  /** A pass-through failure answered by the provider: its answer, relayed when no other target takes over. */
  relay?: UpstreamRelay;
}

export type AttemptOutcome = AttemptSuccess | AttemptFailure;

export interface AttemptInput {
  resolved: ResolvedTarget;
  request: AdapterRequest;
  upstream: UpstreamClient;
  clientSignal: AbortSignalLike;
  timeoutMs: number;
  idleTimeoutMs: number;
  /** The most of the provider's answer held: read whole, or one event of its stream. */
  limits: UpstreamLimits;
  /**
   * performance.now() by which this stream's first chunk must reach the sink: the request's deadline,
   * which bounds the walk until the client has a first byte. A response head followed by silence is cut
   * there, not at the end of a whole idle deadline. Undefined when the client already holds part of the
   * answer (a continuation): then only the call's own deadlines apply.
   */
  firstChunkBy?: number | undefined;
  /** Streams only: where chunks go, every one as the adapter produced it (usage included). */
  sink?: CallSink;
  /** The JSON text the client sent `request.body` as, when the target is sent the client's body (no
   * override_params, no hook rewrote it): what sizes a fan-out of n (fanoutCallsAtOnce). */
  clientBodyText?: string | undefined;
}

/** After every choice finished, how long the rest of a stream (usage, [DONE]) may take. */
const FINISHED_STREAM_GRACE_MS = 1000;

/** Provider response headers worth passing on to the client of a model call. A request's id is OpenAI's
 * `x-request-id` or Anthropic's `request-id`, which each SDK gives its user (`_request_id`). */
const FORWARDED_RESPONSE_HEADERS = /^(x-ratelimit-|retry-after|(x-)?request-id$|openai-processing-ms$)/;

export function forwardableHeaders(
  headers: Record<string, string>,
  requestIdHeader?: string,
): Record<string, string> {
  return copyForwardableHeaders(headers, {}, requestIdHeader);
}

/** Adds the forwardable ones of a provider's `headers` to `into` (the answer's), and returns it. The
 * provider's request id, under whichever of the two names it gave it, is also written under
 * `requestIdHeader`, the one the client's SDK reads (an Anthropic answer to an OpenAI client); a provider
 * that sent both keeps its own of that name, whatever the order of its headers. */
export function copyForwardableHeaders(
  headers: Record<string, string>,
  into: Record<string, string>,
  requestIdHeader?: string,
): Record<string, string> {
  for (const name in headers) {
    if (!FORWARDED_RESPONSE_HEADERS.test(name)) continue;
    const value = headers[name];
    into[name] = value;
    if (
      requestIdHeader !== undefined &&
      name !== requestIdHeader &&
      (name === 'x-request-id' || name === 'request-id') &&
      headers[requestIdHeader] === undefined
    ) {
      into[requestIdHeader] = value;
    }
  }
  return into;
}

function connectionError(provider: string, err: unknown): GatewayError {
  const message = err instanceof Error ? err.message : String(err);
  return new GatewayError('upstream_unreachable', `Could not reach ${provider}: ${message}`, { cause: err });
}

function timeoutError(provider: string, ms: number, phase: string): GatewayError {
  return new GatewayError('request_timeout', `${provider} did not answer within ${ms} ms (${phase})`);
}

/**
 * The longest delay Node's timers hold (2^31 - 1 ms, about 24.8 days): a longer one fires after 1 ms.
 * `request_timeout` and the timeout settings have no upper bound, so a deadline is held at this instead.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One attempt's state: its abort (it is the signal of the upstream request, aborted by its deadline or by
 * the client's going), its deadline, its phase, and how a failure is reported. One object of one shape
 * rather than an abort, a deadline and closures: this is made for every call and held while it waits on
 * the provider; it is also the listener of the client's abort.
 */
class AttemptScope extends CallAbort {
  private timer: NodeJS.Timeout | undefined = undefined;
  /** The deadline passed (and aborted the call). */
  expired = false;
  /** The deadline's delay as last armed; re-armed per chunk while streaming. */
  ms = 0;
  phase: 'first byte' | 'body' | 'first chunk' | 'stream idle' = 'first byte';
  ttfbMs: number | null = null;
  malformedChunks = 0;

  constructor(private readonly input: AttemptInput) {
    super();
    this.arm(input.timeoutMs);
    input.clientSignal.addEventListener('abort', this, { once: true });
    // A client gone before this call started fired its abort already: the listener would never run.
    if (input.clientSignal.aborted) this.abort();
  }

  /** Arms the deadline afresh, `ms` from now. */
  arm(ms: number): void {
    this.clearDeadline();
    // In whole milliseconds, as Node's timers count: what is left of the request's deadline is a fraction
    // different for every call, and Node keeps a list of timers (and a key naming it) per distinct delay.
    this.ms = Math.min(Math.ceil(ms), MAX_TIMER_MS);
    this.timer = setTimeout(expire, this.ms, this);
  }

  clearDeadline(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  /** The deadline passed. */
  expire(): void {
    this.expired = true;
    this.abort();
  }

  end(): void {
    this.clearDeadline();
    this.input.clientSignal.removeEventListener('abort', this);
  }

  enterStreamPhase(): void {
    this.phase = this.input.firstChunkBy === undefined ? 'stream idle' : 'first chunk';
    this.armIdle();
  }

  /** The provider sent an event (not a keep-alive comment): the silence the idle deadline measures starts
   * over. */
  heard(): void {
    // Before the first chunk the deadline may be the request's, which does not move.
    if (this.phase === 'first chunk') this.armIdle();
    else this.timer?.refresh();
  }

  private armIdle(): void {
    const { idleTimeoutMs, firstChunkBy } = this.input;
    const left =
      this.phase === 'first chunk' && firstChunkBy !== undefined
        ? Math.max(1, firstChunkBy - performance.now())
        : Infinity;
    this.arm(Math.min(idleTimeoutMs, left));
  }

  /** The stream's first chunk reached the sink: from now on only the idle deadline bounds a silence. */
  firstChunkSent(): void {
    if (this.phase !== 'first chunk') return;
    this.phase = 'stream idle';
    this.armIdle();
  }

  fail(
    error: GatewayError | ProviderError,
    reason: FailureReason,
    afterFirstByte = false,
    usage?: Usage,
  ): AttemptFailure {
    const { request } = this.input;
    return {
      ok: false,
      error: scrubSecrets(error, targetSecrets(request.target, request.auth)),
      status: error.status,
      reason,
      afterFirstByte,
      usage,
      ttfbMs: this.ttfbMs,
      malformedChunks: this.malformedChunks,
    };
  }

  /** A call that broke off: the client left, a deadline passed, the address policy refused, or the
   * connection failed. */
  interrupted(err: unknown, afterFirstByte: boolean, usage?: Usage): AttemptFailure {
    const provider = this.input.resolved.adapter.id;
    if (this.input.clientSignal.aborted) {
      return this.fail(
        new GatewayError('request_timeout', 'The client went away'),
        'client_gone',
        afterFirstByte,
        usage,
      );
    }
    if (this.expired) {
      return this.fail(timeoutError(provider, this.ms, this.phase), 'timeout', afterFirstByte, usage);
    }
    if (err instanceof UpstreamTooLarge) {
      return this.fail(tooLargeFailure(provider, err), 'invalid_response', afterFirstByte, usage);
    }
    if (refusedByPolicy(err)) {
      const refused = new GatewayError('custom_host_refused', (err as Error).message, {
        param: 'custom_host',
      });
      return this.fail(refused, 'config', afterFirstByte, usage);
    }
    return this.fail(
      connectionError(provider, err),
      afterFirstByte ? 'stream_cut' : 'connection',
      afterFirstByte,
      usage,
    );
  }
}

function expire(scope: AttemptScope): void {
  scope.expire();
}

export async function runAttempt(input: AttemptInput): Promise<AttemptOutcome> {
  const { resolved, request, upstream } = input;
  const { adapter } = resolved;
  const provider = adapter.id;
  const started = performance.now();
  const scope = new AttemptScope(input);

  try {
    let response: UpstreamResponse;
    try {
      if (adapter.authenticate)
        request.auth = await adapter.authenticate(request.target, scope, upstream.ownRequests);
      const built = operationOf(adapter, request.endpoint).buildRequest(request);
      // Most adapters build synchronously: no await (and no turn of the microtask queue) for them.
      const upstreamRequest = built instanceof Promise ? await built : built;
      response = await upstream.send(upstreamRequest, scope);
    } catch (err) {
      if (err instanceof GatewayError || err instanceof ProviderError) {
        return scope.fail(err, err instanceof GatewayError && err.status < 500 ? 'config' : 'status');
      }
      return scope.interrupted(err, false);
    }
    scope.ttfbMs = performance.now() - started;
    const { headers, statusCode: status } = response;

    if (status < 200 || status >= 300) {
      scope.phase = 'body';
      let bodyText: string;
      try {
        bodyText = await response.body.text(input.limits.answerBytes);
      } catch (err) {
        return scope.interrupted(err, false);
      }
      const error = adapter.parseError(request, { status, headers, bodyText });
      // The provider's rate-limit headers and request id go to the client with its error too.
      for (const [name, value] of Object.entries(forwardableHeaders(headers))) error.headers[name] ??= value;
      return scope.fail(error, 'status');
    }

    if (input.sink) return await relayStream(input, input.sink, response, headers, scope);

    scope.phase = 'body';
    let text: string;
    try {
      text = await response.body.text(input.limits.answerBytes);
    } catch (err) {
      return scope.interrupted(err, false);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return scope.fail(
        new GatewayError(
          'upstream_invalid_response',
          `${provider} answered ${status} with a body that is not JSON`,
        ),
        'invalid_response',
      );
    }
    const handler = operationOf(adapter, request.endpoint);
    let body: unknown;
    try {
      body = handler.parseResponse(request, { status, headers, body: json });
    } catch (err) {
      if (err instanceof ProviderError || err instanceof GatewayError)
        return scope.fail(err, 'invalid_response');
      throw err;
    }
    const answer = body as { usage?: Usage; model?: string };
    return {
      ok: true,
      status,
      streamed: false,
      body,
      rawText: body === json ? text : undefined,
      usage: handler.usageOf ? handler.usageOf(body, request) : answer.usage,
      model: answer.model,
      upstreamHeaders: headers,
      ttfbMs: scope.ttfbMs,
      malformedChunks: 0,
    };
  } finally {
    scope.end();
  }
}

async function relayStream(
  input: AttemptInput,
  sink: CallSink,
  response: UpstreamResponse,
  headers: Record<string, string>,
  scope: AttemptScope,
): Promise<AttemptOutcome> {
  const { resolved, request } = input;
  const { adapter } = resolved;
  const { eventBytes } = input.limits;
  // A stream whose answer is kept whole until it ends is held to the bound of a whole answer; any other
  // is relayed however long it goes on (the client's stream holds nothing of it but bounded text).
  const decoder = adapter.createFrameDecoder?.(eventBytes) ?? createSseDecoder(eventBytes);
  const translator = streamTranslatorOf(adapter, request);
  const streamBytes = sink.holdsWhole || translator.holdsWhole ? input.limits.answerBytes : Infinity;
  let streamed = 0;
  const attemptStartChunks = sink.written;
  let done = false;
  let chunked = false;
  let model: string | undefined;
  scope.enterStreamPhase();

  sink.upstreamHeaders?.(headers);
  const wroteAny = () => sink.written > attemptStartChunks;
  const success = (): AttemptSuccess => ({
    ok: true,
    status: response.statusCode,
    streamed: true,
    usage: translator.usage(),
    model,
    serviceTier: translator.serviceTier?.(),
    upstreamHeaders: headers,
    ttfbMs: scope.ttfbMs,
    malformedChunks: scope.malformedChunks,
  });

  // Returns a failure to stop the stream, or undefined to go on.
  const handle = async (outputs: StreamOutput[]): Promise<AttemptFailure | undefined> => {
    for (const output of outputs) {
      switch (output.type) {
        case 'done':
          done = true;
          break;
        case 'malformed':
          scope.malformedChunks += 1;
          break;
        case 'error':
          return scope.fail(output.error, 'stream_error', wroteAny(), translator.usage());
        case 'chunk': {
          const chunk = output.chunk as AnswerChunk;
          model ??= chunkModel(chunk);
          if (!chunked) {
            chunked = true;
            scope.firstChunkSent();
          }
          const pending = sink.chunk(chunk, output.raw);
          if (pending) {
            // A slow reader is the client's pace, not the provider's silence: no deadline while it drains.
            const ms = scope.ms;
            scope.clearDeadline();
            await pending;
            scope.arm(ms);
          }
          break;
        }
      }
    }
    return undefined;
  };

  let closing = false;
  try {
    for await (const bytes of response.body) {
      streamed += (bytes as Uint8Array).length;
      if (streamed > streamBytes) throw new UpstreamTooLarge('stream', streamBytes);
      const events = decoder.push(bytes as Uint8Array);
      // Only a whole event is word from the provider: bytes of SSE comments (`: keep-alive`) that a stuck
      // upstream or a proxy sends forever are not, and would hold the idle deadline off for good.
      if (events.length === 0) continue;
      scope.heard();
      const failure = await handle(events.flatMap((event) => translator.push(event)));
      if (failure) {
        response.body.destroy();
        return failure;
      }
      if (!closing && (done || translator.finished())) {
        // [DONE] came, or every choice has finished: what may still come is the usage chunk, [DONE] and
        // the end of the body. An upstream that then keeps the connection open is not waited on for a
        // whole idle deadline.
        closing = true;
        scope.arm(Math.min(input.idleTimeoutMs, FINISHED_STREAM_GRACE_MS));
      }
      if (sink.gone) {
        response.body.destroy();
        return scope.fail(
          new GatewayError('request_timeout', 'The client went away'),
          'client_gone',
          true,
          translator.usage(),
        );
      }
    }
  } catch (err) {
    if (err instanceof UpstreamTooLarge) {
      // The decoder refused an event, or the stream passed what may be held of it: the rest is not read.
      response.body.destroy();
      return scope.interrupted(err, wroteAny(), translator.usage());
    }
    // The body broke: what was decoded so far still counts, then the attempt is judged as cut.
    const tail = await handle(translator.end());
    if (tail) return tail;
    // A body that broke because the client left is the client's doing, not a complete answer delivered.
    if ((done || translator.finished()) && !input.clientSignal.aborted) return success();
    return scope.interrupted(err, wroteAny(), translator.usage());
  }
  const tail = await handle([
    ...decoder.end().flatMap((event) => translator.push(event)),
    ...translator.end(),
  ]);
  if (tail) return tail;
  if (done || translator.finished()) return success();
  return scope.fail(
    new GatewayError(
      'upstream_invalid_response',
      `${adapter.id} ended the stream before the answer was complete`,
    ),
    'stream_cut',
    wroteAny(),
    translator.usage(),
  );
}

/** A failure before anything of an answer came (breaker open, deadline passed, the call not made). */
export function gatewayFailure(error: GatewayError | ProviderError, reason: FailureReason): AttemptFailure {
  return {
    ok: false,
    error,
    status: error.status,
    reason,
    afterFirstByte: false,
    usage: undefined,
    ttfbMs: null,
    malformedChunks: 0,
  };
}
