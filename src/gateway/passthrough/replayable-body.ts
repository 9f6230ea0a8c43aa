/**
 * A pass-through request body, streamed to the provider as it arrives (no size cap, never buffered whole),
 * and kept on the way up to `replayLimit` bytes so that a retry or a fallback can send it again. A body
 * larger than that can be sent once: a second send is refused, and the first failure stands.
 */
import { GatewayError } from '../../core/errors.js';

export class ReplayableBody {
  private readonly kept: Uint8Array[] = [];
  private keptBytes = 0;
  /** false once more than replayLimit bytes went by: what was kept is no longer the whole beginning. */
  private replayable = true;
  private ended = false;
  private sends = 0;
  private receivedBytes = 0;
  private readonly source: AsyncIterator<Uint8Array>;

  constructor(
    source: AsyncIterable<Uint8Array>,
    private readonly replayLimit: number,
  ) {
    this.source = source[Symbol.asyncIterator]();
  }

  /** Whether the body can be sent (again). */
  get canSend(): boolean {
    return this.sends === 0 || this.replayable;
  }

  /** The bytes read from the client so far (a body sent in chunks has no length to go by). */
  get received(): number {
    return this.receivedBytes;
  }

  /** The whole body, when it came within the replay limit and was read to its end (for the log). */
  get whole(): Uint8Array | undefined {
    return this.ended && this.replayable ? Buffer.concat(this.kept) : undefined;
  }

  /** The body for one send: what was kept so far, then the rest as it arrives. */
  send(): AsyncIterable<Uint8Array> {
    if (!this.canSend) {
      throw new GatewayError(
        'payload_too_large',
        `The request body is larger than ${this.replayLimit} bytes and was already sent once: it cannot be sent to another attempt`,
      );
    }
    this.sends += 1;
    return this.iterate();
  }

  /** Reads the whole body (for providers that sign its bytes); refused as soon as it passes the replay
   * limit, without waiting for the rest of it. */
  async bytes(): Promise<Uint8Array> {
    for await (const _chunk of this.send()) {
      void _chunk;
      if (!this.replayable) break;
    }
    const whole = this.whole;
    if (!whole) {
      throw new GatewayError(
        'payload_too_large',
        `The request body is larger than ${this.replayLimit} bytes`,
      );
    }
    return whole;
  }

  private async *iterate(): AsyncGenerator<Uint8Array> {
    let index = 0;
    for (;;) {
      if (index < this.kept.length) {
        yield this.kept[index++];
        continue;
      }
      if (this.ended) return;
      const next = await this.source.next();
      if (next.done) {
        this.ended = true;
        return;
      }
      const chunk = next.value;
      this.receivedBytes += chunk.byteLength;
      if (this.replayable) {
        this.keptBytes += chunk.byteLength;
        if (this.keptBytes > this.replayLimit) {
          this.replayable = false;
          this.kept.length = 0;
        } else {
          this.kept.push(chunk);
          index++;
        }
      }
      yield chunk;
    }
  }
}
