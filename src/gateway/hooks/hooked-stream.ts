/**
 * The sink a target's stream passes through when its config has hooks. It puts `hook_results` into the
 * first chunk the client gets, keeps the chunks when output checks are to see the whole answer, and —
 * when an output check may deny or rewrite the answer — holds every chunk back until the checks have
 * passed: the client then gets nothing of a denied answer. While held, the client has no byte of this
 * attempt (`written` stays 0), so a stream that breaks can still be retried or fall back.
 */
import { ForwardingSink, type AnswerChunk, type CallSink } from '../sink.js';
import type { HookResults } from './hook-result-types.js';

export class HookedStream extends ForwardingSink {
  readonly chunks: AnswerChunk[] = [];

  constructor(
    next: CallSink,
    private readonly hold: boolean,
    private readonly keep: boolean,
    /** What goes into the first chunk written; undefined once it has gone (or, held, until the flush). */
    private results: HookResults | undefined,
  ) {
    super(next);
  }

  override get written(): number {
    return this.hold ? 0 : this.next.written;
  }

  /** The output checks see the whole answer: its chunks are kept to its end. */
  override get holdsWhole(): boolean {
    return this.keep || this.next.holdsWhole === true;
  }

  override chunk(chunk: AnswerChunk, raw: string | undefined): Promise<void> | undefined {
    if (this.keep) this.chunks.push(chunk);
    if (this.hold) return undefined;
    return this.forward(chunk, raw);
  }

  private forward(chunk: AnswerChunk, raw: string | undefined): Promise<void> | undefined {
    const results = this.results;
    // A continuation's chunks join a stream the client already has: its first chunk carried the results.
    if (results === undefined || this.next.written > 0) return this.next.chunk(chunk, raw);
    const before = this.next.written;
    const carrying: AnswerChunk & { hook_results?: HookResults } = { ...chunk };
    carrying.hook_results = results;
    const pending = this.next.chunk(carrying, undefined);
    // A chunk the client is not shown (usage it did not ask for) carries nothing: try the next one.
    if (this.next.written > before) this.results = undefined;
    return pending;
  }

  /** Sends the held chunks (or their rewrite), the first carrying `results`. */
  async flush(chunks: readonly AnswerChunk[], results: HookResults): Promise<void> {
    this.results = results;
    for (const chunk of chunks) {
      if (this.next.gone) return;
      const pending = this.forward(chunk, undefined);
      if (pending) await pending;
    }
  }
}
