/**
 * The calls' spans waiting to be sent, each call's written into its batch's export request when it ends
 * (otlp-proto.ts, otlp-json.ts): sent in batches of `maxBatch` calls, or `delayMs` after the first one
 * waiting, one batch at a time.
 *
 * Why not the SDK's batch span processor: it holds span objects until their batch goes, some hundred
 * milliseconds at a busy gateway, so every call's spans (records, attributes, the processor's views of
 * them) outlived a young-generation collection or two, were copied and promoted, and a batch was encoded
 * into one JSON string of most of a megabyte, allocated straight into the old generation. Garbage
 * collection was then the largest part of what tracing cost. Written at once, a call's spans are garbage
 * before the next collection, and what waits is a buffer outside V8's heap.
 */
import { settlesBy } from '../core/settles-by.js';
import type { SpanRecord } from './span-record.js';

/** Calls' spans being written as one export request (otlp-proto.ts, otlp-json.ts). */
export interface SpanBatch {
  /** Calls added. */
  readonly calls: number;
  add(spans: readonly SpanRecord[]): void;
}

export interface SpanQueueOptions {
  /** How long the first call waiting may wait for its batch to fill, ms. */
  delayMs: number;
  /** Calls per batch. */
  maxBatch: number;
  /** Calls waiting beyond this are dropped (and counted) rather than exhausting memory. */
  maxQueued: number;
}

/** Sends one batch; resolves once it is sent or has failed for good (the transport retries). */
export type SendBatch<B> = (batch: B) => Promise<void>;

export class SpanQueue<B extends SpanBatch> {
  /** Calls dropped because the queue was full. */
  dropped = 0;
  /** The batch calls are being written into. */
  private open: B | undefined;
  /** Batches written and waiting to be sent, oldest first. */
  private readonly full: B[] = [];
  /** Calls in `open` and `full`. */
  private waiting = 0;
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;

  constructor(
    private readonly newBatch: () => B,
    private readonly send: SendBatch<B>,
    private readonly options: SpanQueueOptions,
  ) {}

  /** One call's spans. */
  add(spans: readonly SpanRecord[]): void {
    if (this.waiting >= this.options.maxQueued) {
      this.dropped += 1;
      return;
    }
    const batch = (this.open ??= this.newBatch());
    batch.add(spans);
    this.waiting += 1;
    if (batch.calls >= this.options.maxBatch) {
      this.full.push(batch);
      this.open = undefined;
      this.sendNext();
    } else this.arm();
  }

  /**
   * Sends everything waiting, batch after batch, until `deadline` (a `performance.now()` time): what is
   * still waiting then is dropped and counted, so that a stop does not wait on an unreachable collector
   * for every batch's retries in turn.
   */
  async flush(deadline = Infinity): Promise<void> {
    while (this.sending !== undefined || this.waiting > 0) {
      this.sendNext();
      if (!(await settlesBy(this.sending, deadline))) {
        this.dropWaiting();
        return;
      }
    }
  }

  private dropWaiting(): void {
    this.dropped += this.waiting;
    this.waiting = 0;
    this.open = undefined;
    this.full.length = 0;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.timer !== undefined || this.sending !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sendNext();
    }, this.options.delayMs);
    this.timer.unref();
  }

  /** The next batch to send: a full one, else the one being written. */
  private take(): B | undefined {
    const batch = this.full.shift() ?? this.open;
    if (batch === this.open) this.open = undefined;
    if (batch !== undefined) this.waiting -= batch.calls;
    return batch;
  }

  private sendNext(): void {
    if (this.sending !== undefined) return;
    const batch = this.take();
    if (batch === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.sending = this.send(batch)
      .catch(() => undefined)
      .finally(() => {
        this.sending = undefined;
        // A full batch goes at once; a partial one waits its delay.
        if (this.full.length > 0) this.sendNext();
        else if (this.open !== undefined) this.arm();
      });
  }
}
