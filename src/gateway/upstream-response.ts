/**
 * An upstream answer read through undici's `dispatch` handler API: the status and headers once they
 * arrive, then the body's chunks as they come. undici's `request` wraps the body in a Readable stream;
 * building and draining that stream (its state, events and ticks) was a visible share of what a call
 * cost the gateway, for bodies that are read whole or relayed chunk by chunk anyway.
 *
 * One object is the handler, the response and its body, so a call allocates one thing for all three.
 */
import type { Dispatcher } from 'undici';
import type { AbortSignalLike } from '../core/abort.js';
import { UpstreamTooLarge } from '../core/upstream-limits.js';

export interface UpstreamResponse {
  statusCode: number;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  body: UpstreamBody;
}

/** The body: read whole with `bytes()` or `text()`, or chunk by chunk (the pace of the reader holds the
 * upstream back). */
export interface UpstreamBody extends AsyncIterable<Uint8Array> {
  /** The whole body; past `maxBytes` (a `Content-Length` above it, or the bytes as they come) the request
   * is closed and the promise rejects with UpstreamTooLarge, so that no more of it is held. There is no
   * unbounded read: what answers from outside may not end. */
  bytes(maxBytes: number): Promise<Buffer>;
  /** `bytes()` read as UTF-8. */
  text(maxBytes: number): Promise<string>;
  /** Stops reading and closes the upstream request; a reader waiting for a chunk ends. */
  destroy(): void;
}

/** Chunks queued ahead of the reader before the upstream socket is paused. */
const HIGH_WATER_CHUNKS = 16;

type Waiter = {
  resolve(value: IteratorResult<Uint8Array>): void;
  reject(error: unknown): void;
};

/** A reader of the whole body: what it makes of the bytes, and where that goes. */
type WholeReader = {
  read(bytes: Buffer): unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
};

// Module-level, so that a whole read makes no closure of its own.
const asBytes = (bytes: Buffer): Buffer => bytes;
const asText = (bytes: Buffer): string => bytes.toString('utf8');

export class UpstreamCall
  implements Dispatcher.DispatchHandler, UpstreamResponse, UpstreamBody, AsyncIterator<Uint8Array>
{
  statusCode = 0;
  headers: Record<string, string> = {};
  readonly body: UpstreamBody = this;

  private controller: Dispatcher.DispatchController | undefined;
  private readonly chunks: Buffer[] = [];
  /** Bytes of `chunks`, for the bound of a whole read. */
  private queuedBytes = 0;
  private wholeLimit = Infinity;
  private ended = false;
  private failure: unknown = undefined;
  private started = false;
  private onHead: { resolve(response: UpstreamResponse): void; reject(error: unknown): void } | undefined;
  private waiter: Waiter | undefined;
  private onWhole: WholeReader | undefined;

  /** Resolves with this response once the status and headers came; rejects if the call failed before. */
  readonly head: Promise<UpstreamResponse>;

  constructor(private readonly signal: AbortSignalLike) {
    this.head = new Promise((resolve, reject) => (this.onHead = { resolve, reject }));
    signal.addEventListener('abort', this);
  }

  /** The signal's abort (an EventListener object, which spares a closure per call). */
  handleEvent(): void {
    this.controller?.abort(abortReason(this.signal));
  }

  // --- undici's side ---

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.signal.aborted) controller.abort(abortReason(this.signal));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200) return; // 1xx informational: the answer's own head follows
    this.statusCode = statusCode;
    this.headers = flattenHeaders(headers);
    this.started = true;
    this.onHead?.resolve(this);
    this.onHead = undefined;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      waiter.resolve({ done: false, value: chunk });
      return;
    }
    this.chunks.push(chunk);
    this.queuedBytes += chunk.length;
    if (this.onWhole) {
      if (this.queuedBytes > this.wholeLimit) this.refuseWhole();
    } else if (this.chunks.length >= HIGH_WATER_CHUNKS) controller.pause();
  }

  onResponseEnd(): void {
    this.ended = true;
    this.settle();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.failure = error;
    this.settle();
  }

  private settle(): void {
    this.signal.removeEventListener('abort', this);
    if (!this.started) {
      this.onHead?.reject(this.failure ?? new Error('The upstream answer ended before its headers'));
      this.onHead = undefined;
      return;
    }
    if (this.onWhole) {
      const onWhole = this.onWhole;
      this.onWhole = undefined;
      if (this.failure !== undefined) onWhole.reject(this.failure);
      else onWhole.resolve(onWhole.read(this.drain()));
    }
    const waiter = this.waiter;
    if (waiter && this.chunks.length === 0) {
      this.waiter = undefined;
      if (this.failure !== undefined) waiter.reject(this.failure);
      else waiter.resolve({ done: true, value: undefined });
    }
  }

  // --- the reader's side ---

  bytes(maxBytes: number): Promise<Buffer> {
    return this.whole(maxBytes, asBytes);
  }

  text(maxBytes: number): Promise<string> {
    return this.whole(maxBytes, asText);
  }

  /** The one read of the whole body under a bound, whatever is made of its bytes. */
  private whole<T>(maxBytes: number, read: (bytes: Buffer) => T): Promise<T> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    // An answer that says it is too large is refused before any more of it comes.
    if (this.queuedBytes > maxBytes || Number(this.headers['content-length']) > maxBytes) {
      this.destroy();
      return Promise.reject(new UpstreamTooLarge('answer', maxBytes));
    }
    if (this.ended) return Promise.resolve(read(this.drain()));
    this.wholeLimit = maxBytes;
    const whole = new Promise<T>(
      (resolve, reject) => (this.onWhole = { read, resolve: resolve as (value: unknown) => void, reject }),
    );
    // After onWhole is set: resuming may hand over a chunk at once, which with no reader of the whole
    // body noted would pause the upstream again, for good.
    this.controller?.resume();
    return whole;
  }

  /** The body being read whole passed its bound: the request is closed and the reader told why. */
  private refuseWhole(): void {
    const onWhole = this.onWhole as WholeReader;
    this.onWhole = undefined;
    this.destroy();
    onWhole.reject(new UpstreamTooLarge('answer', this.wholeLimit));
  }

  private drain(): Buffer {
    const { chunks } = this;
    const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    chunks.length = 0;
    this.queuedBytes = 0;
    return bytes;
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return this;
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    const chunk = this.chunks.shift();
    if (chunk !== undefined) {
      this.queuedBytes -= chunk.length;
      if (this.chunks.length === 0 && this.controller?.paused) this.controller.resume();
      return Promise.resolve({ done: false, value: chunk });
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    if (this.controller?.paused) this.controller.resume();
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  /** A reader that stops early (`break` out of `for await`) closes the request. */
  return(): Promise<IteratorResult<Uint8Array>> {
    this.destroy();
    return Promise.resolve({ done: true, value: undefined });
  }

  destroy(): void {
    // Taken first: aborting the request reports its error synchronously, which must not reach this reader.
    const waiter = this.waiter;
    this.waiter = undefined;
    this.chunks.length = 0;
    this.queuedBytes = 0;
    if (!this.ended && this.failure === undefined) {
      this.failure = new Error('The upstream answer was not read to its end');
      this.controller?.abort(this.failure as Error);
    }
    this.signal.removeEventListener('abort', this);
    waiter?.resolve({ done: true, value: undefined });
  }
}

function abortReason(signal: AbortSignalLike): Error {
  return signal.reason instanceof Error
    ? signal.reason
    : new DOMException('This operation was aborted', 'AbortError');
}

/**
 * What separates the values of a repeated `Set-Cookie` in a flattened header: a cookie's own text holds
 * commas (its `Expires` date), so its values cannot be joined by them as other fields' are (RFC 9110
 * §5.3), and no header value can hold a line break.
 */
export const SET_COOKIE_SEPARATOR = '\n';

/** Lower-cases and flattens undici's response headers: repeated ones joined with `, ` (`Set-Cookie`'s
 * with SET_COOKIE_SEPARATOR). */
export function flattenHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    out[lower] = Array.isArray(value)
      ? value.join(lower === 'set-cookie' ? SET_COOKIE_SEPARATOR : ', ')
      : value;
  }
  return out;
}
