/**
 * The client's connection as a sink: the answer's bytes come from the ingress codec; the gateway's route
 * headers (answering provider, target, retries, cache status, rate limits, a whole answer's cost) go out with the first byte, so until then a
 * failed attempt can still be replaced by another one, or end as a plain HTTP error. Streams are written
 * with backpressure; a broken stream ends with the codec's in-band error, never as a complete answer.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { ERROR_SOURCE_HEADER, GatewayError, ProviderError } from '../core/errors.js';
import { copyForwardableHeaders, forwardableHeaders } from '../gateway/attempt.js';
import { HEADERS } from '../gateway/context.js';
import type { RouteState } from '../gateway/router.js';
import type { AnswerChunk, CallSink, JsonAnswer } from '../gateway/sink.js';
import type { IngressCodec, StreamEncoder } from '../ingress/codec.js';
import { formatCost } from '../observability/pricing/cost.js';

/** Where the API family's SDK reads an answer's request id from: the `openai` SDK `x-request-id`, Anthropic's
 * `request-id`. Every answer carries it: the provider's request id, else the gateway's trace id. The one a
 * request's answers carry is chosen by its path (app.ts, request.requestIdHeader). */
export type RequestIdHeader = 'x-request-id' | 'request-id';

export function routeHeaders(state: RouteState): Record<string, string> {
  return addRouteHeaders(state, {});
}

/** Adds the route's headers to `headers`, and returns it. */
function addRouteHeaders(state: RouteState, headers: Record<string, string>): Record<string, string> {
  headers[HEADERS.retryAttemptCount] = String(state.retryCount);
  if (state.provider) headers[HEADERS.answeringProvider] = state.provider;
  if (state.targetPath !== null) headers[HEADERS.lastUsedOptionIndex] = state.targetPath;
  if (state.cacheStatus) headers[HEADERS.cacheStatus] = state.cacheStatus;
  if (state.cacheSimilarity !== null) headers[HEADERS.cacheSimilarity] = state.cacheSimilarity.toFixed(4);
  if (state.cacheEntryId) headers[HEADERS.cacheEntryId] = state.cacheEntryId;
  if (state.rateLimitHeaders) Object.assign(headers, state.rateLimitHeaders);
  if (state.cost !== null) headers[HEADERS.cost] = formatCost(state.cost);
  return headers;
}

/**
 * The headers a non-streamed answer goes out with: the reply's own, the provider's, the route's. The
 * route's come last: a gateway policy's `x-ratelimit-*` limits are the ones the client meets, so they
 * replace the provider's of that name. One object, written into in turn (this is on every answer's path).
 */
export function answerHeaders(
  reply: FastifyReply,
  state: RouteState,
  answer: JsonAnswer,
): Record<string, string> {
  // A copy made for this call: Fastify builds a new object for each getHeaders(). It holds the request id
  // header already (the trace id, app.ts), which the provider's request id replaces.
  const headers = reply.getHeaders() as Record<string, string>;
  copyForwardableHeaders(answer.headers, headers, reply.request.requestIdHeader);
  return addRouteHeaders(state, headers);
}

export class HttpSink implements CallSink {
  written = 0;
  private opened = false;
  private closed = false;
  private readonly res: ServerResponse;
  /** The relayed stream's provider headers, of which the forwardable ones go out with the stream's head. */
  private upstream: Record<string, string> | undefined;

  constructor(
    private readonly reply: FastifyReply,
    private readonly codec: IngressCodec<never>,
    private readonly encoder: StreamEncoder | undefined,
    private readonly state: RouteState,
  ) {
    this.res = reply.raw;
  }

  get gone(): boolean {
    return this.closed || this.res.destroyed || this.res.writableEnded;
  }

  upstreamHeaders(headers: Record<string, string>): void {
    if (!this.opened) this.upstream = headers;
  }

  private open(): void {
    if (this.opened) return;
    this.opened = true;
    this.reply.hijack();
    const headers = this.reply.getHeaders() as Record<string, string>;
    if (this.upstream) copyForwardableHeaders(this.upstream, headers, this.reply.request.requestIdHeader);
    headers['content-type'] = this.codec.streamContentType;
    headers['cache-control'] = 'no-store';
    headers.connection = 'keep-alive';
    headers['x-accel-buffering'] = 'no';
    this.res.writeHead(this.state.streamStatus ?? 200, addRouteHeaders(this.state, headers));
    // No flushHeaders(): Node sends the head with the first chunk, in one write, so the client's first
    // byte of body arrives with the headers instead of after a second packet.
  }

  chunk(chunk: AnswerChunk, raw: string | undefined): Promise<void> | undefined {
    const text = (this.encoder as StreamEncoder).chunk(chunk, raw);
    if (text === undefined) return undefined;
    this.open();
    if (this.gone) return undefined;
    this.written += 1;
    if (this.res.write(text)) return undefined;
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  end(): void {
    if (this.closed) return;
    this.open();
    this.closed = true;
    if (!this.res.destroyed) this.res.end((this.encoder as StreamEncoder).end());
  }

  answer(answer: JsonAnswer): void {
    this.closed = true;
    // Written straight to the connection, as a stream is: Fastify's send pipeline (serialisers, onSend
    // hooks) has nothing to do for a body that is already its final text.
    this.reply.hijack();
    if (this.res.destroyed) return;
    const headers = answerHeaders(this.reply, this.state, answer);
    const body = this.codec.answer(answer);
    headers['content-type'] = 'application/json; charset=utf-8';
    // The whole answer is known: sent with its length, in one piece, rather than as a chunked body.
    headers['content-length'] = String(Buffer.byteLength(body));
    this.res.writeHead(answer.status, headers);
    this.res.end(body);
  }

  fail(error: GatewayError | ProviderError, _status: number): void {
    if (this.closed) return;
    if (this.opened) {
      this.closed = true;
      if (!this.res.destroyed) this.res.end((this.encoder as StreamEncoder).error(error));
      return;
    }
    this.closed = true;
    const { reply } = this;
    if (this.res.destroyed) {
      // The client is gone (the call is recorded as 499): there is no one to answer. Told by the
      // connection, not by the status: a provider may answer 499 itself, and its client is waiting.
      if (!reply.sent) reply.hijack();
      return;
    }
    reply.headers(routeHeaders(this.state));
    reply.header(ERROR_SOURCE_HEADER, error instanceof ProviderError ? 'provider' : 'gateway');
    if (error instanceof ProviderError) {
      reply.headers(forwardableHeaders(error.headers, this.reply.request.requestIdHeader));
      if (this.state.rateLimitHeaders) reply.headers(this.state.rateLimitHeaders);
      if (error.retryAfterMs !== undefined)
        reply.header('retry-after', String(Math.ceil(error.retryAfterMs / 1000)));
    } else if (error instanceof GatewayError) {
      reply.headers(error.headers);
    }
    void reply.code(error.status).type('application/json').send(this.codec.errorBody(error));
  }
}
