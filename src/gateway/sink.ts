/**
 * Where a call's answer goes. The pipeline produces canonical events — chunks of a streamed answer, its
 * end, a whole JSON answer, or a failure — and a sink consumes them: the client's connection (through the
 * ingress codec, server/http-sink.ts), a buffer (an internal call, a batch line), or a wrapper that looks at
 * the events on their way (the cache tee, a continuation's rewriter, later output guardrails).
 *
 * A sink is told exactly one of `end`, `answer` or `fail`, once, after any number of `chunk`s.
 */
import type { GatewayError, ProviderError } from '../core/errors.js';
import type { MessagesStreamEvent } from '../core/messages-types.js';
import type { ChatCompletionChunk, TextCompletion } from '../core/openai-types.js';
import type { ResponsesStreamEvent } from '../core/responses-types.js';

/** A chunk in the OpenAI shape of its operation (chat or text completion). */
export type OpenAIChunk = ChatCompletionChunk | TextCompletion;

/** One chunk of a streamed answer: in the OpenAI shape of its operation, or an Anthropic Messages event or
 * a Responses event relayed as the provider sent it (`/v1/messages`, `/v1/responses` on a provider that
 * has the API natively). */
export type AnswerChunk = OpenAIChunk | MessagesStreamEvent | ResponsesStreamEvent;

/** The model a chunk names: an OpenAI chunk's `model`, a Messages stream's `message_start`, a Responses
 * stream's `response.created`. */
export function chunkModel(chunk: AnswerChunk): string | undefined {
  if ('model' in chunk) return chunk.model;
  if (chunk.type === 'message_start') return chunk.message?.model;
  if (chunk.type === 'response.created') {
    const model = (chunk.response as { model?: unknown } | undefined)?.model;
    return typeof model === 'string' ? model : undefined;
  }
  return undefined;
}

/** A complete non-streamed answer. */
export interface JsonAnswer {
  status: number;
  /** The OpenAI-shaped body. */
  body: unknown;
  /** The exact JSON text of `body` when the upstream sent it as it is (relayed byte for byte). */
  rawText: string | undefined;
  /** The provider's response headers (lower-case). */
  headers: Record<string, string>;
}

export interface CallSink {
  /** Chunks that reached the consumer so far. Once above 0, a failed attempt can no longer be replaced
   * silently: the answer is continued elsewhere or ends with an in-band error. */
  readonly written: number;
  /** The consumer went away: stop producing. */
  readonly gone: boolean;
  /** The consumer keeps the whole streamed answer until it ends (output checks, a Responses stream's
   * `response.completed`): a stream it gets is then read only up to GATEWAY_UPSTREAM_ANSWER_MAX_BYTES, as
   * a whole answer is. Other streams are relayed however long they go on. */
  readonly holdsWhole?: boolean;
  /** Once told `fail`: the consumer holds the failure back and runs the call again later (a rate-limit
   * refusal a batch line or a background response waits out, or a batch line's run the gateway failed
   * before any provider answered: batches/batch-output.ts LineSink, responses/rate-limit-hold.ts). The
   * call is then not over, and leaves no record, only its measures
   * and its spans (CallObserver.callHeldBack): its record is the run that ends it. */
  readonly heldBack?: boolean;
  /** One chunk. `raw` is its JSON text when it can be sent as it is. Returns a promise while the consumer
   * is slow (backpressure). */
  chunk(chunk: AnswerChunk, raw: string | undefined): Promise<void> | undefined;
  /** The provider's response headers of the stream about to be relayed, before its first chunk (each
   * attempt's in turn: the last before the first chunk is the answer's). */
  upstreamHeaders?(headers: Record<string, string>): void;
  /** The streamed answer is complete. */
  end(): void;
  /** The non-streamed answer. */
  answer(answer: JsonAnswer): void;
  /** The call failed; `status` is what the call is recorded with (499 when the client left). */
  fail(error: GatewayError | ProviderError, status: number): void;
}

/** A sink that passes everything on; wrappers override what they look at. */
export class ForwardingSink implements CallSink {
  constructor(protected readonly next: CallSink) {}

  get written(): number {
    return this.next.written;
  }

  get gone(): boolean {
    return this.next.gone;
  }

  get holdsWhole(): boolean {
    return this.next.holdsWhole === true;
  }

  get heldBack(): boolean {
    return this.next.heldBack === true;
  }

  chunk(chunk: AnswerChunk, raw: string | undefined): Promise<void> | undefined {
    return this.next.chunk(chunk, raw);
  }

  upstreamHeaders(headers: Record<string, string>): void {
    this.next.upstreamHeaders?.(headers);
  }

  end(): void {
    this.next.end();
  }

  answer(answer: JsonAnswer): void {
    this.next.answer(answer);
  }

  fail(error: GatewayError | ProviderError, status: number): void {
    this.next.fail(error, status);
  }
}

/** What a buffered call produced: for internal calls (a cache embedding, a judge model) and batch lines. */
export type BufferedResult =
  | { kind: 'stream'; chunks: AnswerChunk[] }
  | { kind: 'answer'; answer: JsonAnswer }
  | { kind: 'error'; error: GatewayError | ProviderError; status: number };

/** Keeps the whole answer in memory; `result` resolves when the call has ended. */
export class BufferSink implements CallSink {
  written = 0;
  gone = false;
  readonly holdsWhole = true;
  private readonly chunks: AnswerChunk[] = [];
  private settle!: (result: BufferedResult) => void;
  readonly result = new Promise<BufferedResult>((resolve) => (this.settle = resolve));

  chunk(chunk: AnswerChunk): undefined {
    this.written += 1;
    this.chunks.push(chunk);
    return undefined;
  }

  end(): void {
    this.settle({ kind: 'stream', chunks: this.chunks });
  }

  answer(answer: JsonAnswer): void {
    this.settle({ kind: 'answer', answer });
  }

  fail(error: GatewayError | ProviderError, status: number): void {
    this.settle({ kind: 'error', error, status });
  }
}
