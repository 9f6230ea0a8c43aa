/**
 * The calls' spans waiting to be sent, each call's already written as its OTLP JSON (otlp-json.ts), as
 * bytes: sent in batches of `maxBatch` calls, or `delayMs` after the first one waiting, one batch at a time.
 *
 * Why not the SDK's batch span processor: it holds span objects until their batch goes, some hundred
 * milliseconds at a busy gateway, so every call's spans (records, attributes, the processor's views of
 * them) outlived a young-generation collection or two, were copied and promoted, and a batch was encoded
 * into one JSON string of most of a megabyte, allocated straight into the old generation. Garbage
 * collection was then the largest part of what tracing cost. Written at once, a call's spans are garbage
 * before the next collection, and what waits is a buffer outside V8's heap.
 */

export interface SpanQueueOptions {
  /** How long the first call waiting may wait for its batch to fill, ms. */
  delayMs: number;
  /** Calls per batch. */
  maxBatch: number;
  /** Calls waiting beyond this are dropped (and counted) rather than exhausting memory. */
  maxQueued: number;
}

/** Sends one batch; resolves once it is sent or has failed for good (the transport retries). */
export type SendBatch = (batch: Uint8Array[]) => Promise<void>;

export class SpanQueue {
  /** Calls dropped because the queue was full. */
  dropped = 0;
  private queued: Uint8Array[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;

  constructor(
    private readonly send: SendBatch,
    private readonly options: SpanQueueOptions,
  ) {}

  /** One call's spans, encoded. */
  add(call: Uint8Array): void {
    if (this.queued.length >= this.options.maxQueued) {
      this.dropped += 1;
      return;
    }
    this.queued.push(call);
    if (this.queued.length >= this.options.maxBatch) this.sendNext();
    else this.arm();
  }

  /** Sends everything waiting, batch after batch. */
  async flush(): Promise<void> {
    while (this.sending !== undefined || this.queued.length > 0) {
      this.sendNext();
      await this.sending;
    }
  }

  private arm(): void {
    if (this.timer !== undefined || this.sending !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sendNext();
    }, this.options.delayMs);
    this.timer.unref();
  }

  private sendNext(): void {
    if (this.sending !== undefined || this.queued.length === 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queued.splice(0, this.options.maxBatch);
    this.sending = this.send(batch)
      .catch(() => undefined)
      .finally(() => {
        this.sending = undefined;
        // A full batch goes at once; a partial one waits its delay.
        if (this.queued.length >= this.options.maxBatch) this.sendNext();
        else if (this.queued.length > 0) this.arm();
      });
  }
}
