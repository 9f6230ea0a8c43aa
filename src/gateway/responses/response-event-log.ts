/** The events of a streamed background response, written to the store as its call makes them. */
import type { GatewayError, ProviderError } from '../../core/errors.js';
import type { ChatCompletionChunk } from '../../core/openai-types.js';
import { isResponsesStreamEvent } from '../../core/responses-types.js';
import type { Repositories, Store } from '../../store/types.js';
import type { AnswerChunk, CallSink, JsonAnswer } from '../sink.js';
import { eventText } from './background.js';
import type { BackgroundHub } from './background-hub.js';
import type { ResponseAssembler } from './response-assembler.js';
import type { ResponseEvent, ResponseObject } from './response-types.js';

/** Stores the response's final state with `repositories` (the transaction of its last events). */
export type SaveFinal = (repositories: Repositories, response: ResponseObject) => Promise<unknown>;

/**
 * The sink at the end of a streamed background response's call: each chunk becomes the Responses events
 * it completes (as the Responses codec makes them for a client), numbered after the events already stored,
 * and written to the store in order, a few at a time. The call's own `response.created` is left out: the
 * stream began with the response's `queued` events when it was created.
 *
 * The response's final state (handed over by `endWith` before the end reaches the log) is stored in one
 * transaction with the last events, after every earlier one: a follower on another node that reads the
 * response ended knows its every event, the terminal one included, is there to read
 * (follow-response-events.ts), and one that reads the terminal event finds the response ended.
 */
export class ResponseEventLog implements CallSink {
  written = 0;
  private sequence: number;
  private pending: Array<{ sequence_number: number; event: string }> = [];
  private writing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  /** Nothing more is written (the call was cancelled, or the node let the response go). */
  private stopped = false;
  private final: ResponseObject | undefined;

  constructor(
    private readonly store: Store,
    private readonly hub: BackgroundHub,
    private readonly id: string,
    private readonly assembler: ResponseAssembler,
    lastSequence: number,
    private readonly saveFinal: SaveFinal,
    private readonly onError: (err: unknown) => void,
  ) {
    this.sequence = lastSequence + 1;
  }

  get gone(): boolean {
    return this.stopped;
  }

  /** Writes nothing more (what is pending is dropped). */
  stop(): void {
    this.stopped = true;
    this.pending = [];
    clearTimeout(this.timer);
  }

  /** The response's final state, stored with the events of its end (`end`, `answer` or `fail`). */
  endWith(response: ResponseObject): void {
    this.final = response;
  }

  /** Resolves once every event handed to the log is in the store. */
  async flushed(): Promise<void> {
    this.flush();
    await this.writing;
  }

  chunk(chunk: AnswerChunk): undefined {
    let events: ResponseEvent[];
    if (isResponsesStreamEvent(chunk)) events = this.assembler.pushNative(chunk);
    else if ('object' in chunk && chunk.object === 'chat.completion.chunk')
      events = this.assembler.push(chunk as ChatCompletionChunk);
    else return undefined;
    if (events.length === 0) return undefined;
    this.written += 1;
    this.add(events);
    return undefined;
  }

  end(): void {
    this.add(this.assembler.finish().events);
    this.flushEnd();
  }

  answer(answer: JsonAnswer): void {
    // A whole answer where a stream was asked (a cached one): the stream ends with it.
    const response = answer.body as ResponseObject;
    const type = response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    this.add([{ type, sequence_number: 0, response }]);
    this.flushEnd();
  }

  fail(error: GatewayError | ProviderError): void {
    this.add(this.assembler.fail(error).events);
    this.flushEnd();
  }

  private add(events: readonly ResponseEvent[]): void {
    if (this.stopped) return;
    for (const event of events) {
      if (event.type === 'response.created') continue;
      const numbered = { ...event, sequence_number: this.sequence++ };
      this.pending.push({ sequence_number: numbered.sequence_number, event: eventText(numbered) });
    }
    this.timer ??= setTimeout(() => this.flush(), 20);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.writing = this.writing
      .then(() => this.store.appendResponseEvents(this.id, batch))
      .then(
        () => this.hub.notify(this.id),
        (err: unknown) => this.onError(err),
      );
  }

  /** The last events and the final state, together, once the earlier events are stored. */
  private flushEnd(): void {
    const final = this.final;
    if (this.stopped || final === undefined) return this.flush();
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    this.writing = this.writing
      .then(() =>
        this.store.transaction(async (tx) => {
          if (batch.length > 0) await tx.appendResponseEvents(this.id, batch);
          await this.saveFinal(tx, final);
        }),
      )
      .catch(async (err: unknown) => {
        this.onError(err);
        // The events could not be stored: the response is not left running for want of them.
        await this.saveFinal(this.store, final);
      })
      .then(
        () => this.hub.notify(this.id),
        (err: unknown) => this.onError(err),
      );
  }
}
