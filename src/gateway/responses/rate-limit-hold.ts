/**
 * In front of a background response's sink: a refusal by the rate limits that came before any of the
 * answer (a policy's limit reached, or the limits unreachable in fail mode `closed`) is held back rather
 * than stored, so that the response waits `queued` for the policy's window and runs again
 * (background-worker.ts), as a batch line does. Only while the wait ends by `until`: a refusal past that
 * fails the response as any failure does. A refusal held leaves no log record (heldBack).
 */
import type { GatewayError, ProviderError } from '../../core/errors.js';
import { refusalWaitMs } from '../rate-limits/refusal-wait.js';
import { ForwardingSink, type AnswerChunk, type CallSink } from '../sink.js';

export class RateLimitHold extends ForwardingSink {
  private chunks = 0;
  /** Set when the refusal was held: how long to wait before the run is made again, ms. */
  waitMs: number | undefined;

  constructor(
    next: CallSink,
    private readonly until: number,
  ) {
    super(next);
  }

  /** A refusal held is no end of the call (CallSink.heldBack): it leaves no log record, only its
   * measures; the run that answers the response leaves its record, as a batch line's does. */
  override get heldBack(): boolean {
    return this.waitMs !== undefined;
  }

  override chunk(chunk: AnswerChunk, raw: string | undefined): Promise<void> | undefined {
    this.chunks += 1;
    return super.chunk(chunk, raw);
  }

  override fail(error: GatewayError | ProviderError, status: number): void {
    const waitMs = this.chunks === 0 ? refusalWaitMs(error) : undefined;
    if (waitMs !== undefined && Date.now() + waitMs <= this.until) {
      this.waitMs = waitMs;
      return;
    }
    super.fail(error, status);
  }
}
