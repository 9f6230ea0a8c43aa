/**
 * Background responses (`background: true`, docs/responses.md): the response is stored `queued` with its
 * run (the call that created it, the request the pipeline carries) and a `response.background` job on the
 * store's queue; a node's worker (background-worker.ts) claims the job under a lease and runs the call
 * through `execute` like any other. A streamed one's events are kept in the store as they come
 * (`ResponseEventLog`), numbered for the client, so that the request that created it and any later
 * `GET /responses/{id}?stream=true&starting_after=N`, on any node, read the same stream
 * (`followResponseEvents`). `BackgroundHub` is one node's shortcut: a follower on the node that runs
 * the response hears of new events, and a cancel reaches the call, at once; from another node both are
 * seen by reading the store.
 */
import type { GatewayError, ProviderError } from '../../core/errors.js';
import type { ChatCompletionChunk } from '../../core/openai-types.js';
import { isResponsesStreamEvent } from '../../core/responses-types.js';
import type { Store } from '../../store/types.js';
import type { AnswerChunk, CallSink, JsonAnswer } from '../sink.js';
import type { ResponseAssembler } from './response-assembler.js';
import type { ResponseEvent, ResponseObject } from './response-types.js';

export const BACKGROUND_JOB = 'response.background';

export interface BackgroundPayload {
  workspace_id: string;
  response_id: string;
}

/** The runs of one response: a run cut short by its node's end (the lease ran out) is run again, until
 * this many have begun; the claim after that fails the response. */
export const BACKGROUND_RUNS = 2;
/** The job's attempts: the runs, and claims to spare for failing the response after them. */
export const BACKGROUND_JOB_ATTEMPTS = BACKGROUND_RUNS + 3;

/** Background responses one node runs at once (more wait `queued` for a node with room). */
export const BACKGROUND_RESPONSE_CONCURRENCY = 32;
/** How long a streamed background response's events (and its run) are kept once it has ended. */
export const BACKGROUND_EVENT_RETENTION_MS = 60 * 60 * 1000;

/** Statuses of a background response that has not ended. */
export const RUNNING_STATUSES = ['queued', 'in_progress'] as const;

/** The events that end a stream. */
const TERMINAL_EVENTS: ReadonlySet<string> = new Set([
  'response.completed',
  'response.incomplete',
  'response.failed',
]);

/** How long a follower on another node waits before reading the store again. */
const FOLLOW_POLL_MS = 200;
/** Events read from the store at once. */
const FOLLOW_PAGE = 500;
/** A response that ended but whose terminal event never came (its node died between the two writes) is
 * followed this long more, then the stream ends. */
const TERMINAL_GRACE_MS = 2_000;

/** One node's background responses: who waits for a response's events, and the calls it runs. */
export class BackgroundHub {
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly calls = new Map<string, () => void>();
  /** Set by the node's worker: look for jobs now. */
  onQueued: () => void = () => undefined;

  /** New events of the response are in the store. */
  notify(id: string): void {
    const waiting = this.waiters.get(id);
    if (!waiting) return;
    this.waiters.delete(id);
    for (const wake of waiting) wake();
  }

  /** Resolves when the response's events change on this node, or after `ms`. */
  wait(id: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let waiting = this.waiters.get(id);
      if (!waiting) {
        waiting = new Set();
        this.waiters.set(id, waiting);
      }
      const set = waiting;
      const wake = () => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && this.waiters.get(id) === set) this.waiters.delete(id);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      timer.unref();
      set.add(wake);
    });
  }

  /** The response runs here: `stop` ends its call and what it writes. Returns the end of that. */
  running(id: string, stop: () => void): () => void {
    this.calls.set(id, stop);
    return () => {
      if (this.calls.get(id) === stop) this.calls.delete(id);
    };
  }

  /** Stops the response's call if this node runs it. */
  cancel(id: string): void {
    this.calls.get(id)?.();
  }
}

function eventText(event: ResponseEvent): string {
  return JSON.stringify(event);
}

/** The first events of a streamed background response, stored with it: `response.created` and
 * `response.queued`, both with the response `queued`. */
export const QUEUED_EVENTS = ['response.created', 'response.queued'] as const;

export function queuedEvents(response: ResponseObject): Array<{ sequence_number: number; event: string }> {
  return QUEUED_EVENTS.map((type, sequence_number) => ({
    sequence_number,
    event: eventText({ type, sequence_number, response }),
  }));
}

/**
 * The sink at the end of a streamed background response's call: each chunk becomes the Responses events
 * it completes (as the Responses codec makes them for a client), numbered after the events already stored,
 * and written to the store in order, a few at a time. The call's own `response.created` is left out: the
 * stream began with the response's `queued` events when it was created.
 */
export class ResponseEventLog implements CallSink {
  written = 0;
  private sequence: number;
  private pending: Array<{ sequence_number: number; event: string }> = [];
  private writing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  /** Nothing more is written (the call was cancelled, or the node let the response go). */
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly hub: BackgroundHub,
    private readonly id: string,
    private readonly assembler: ResponseAssembler,
    lastSequence: number,
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
    this.flush();
  }

  answer(answer: JsonAnswer): void {
    // A whole answer where a stream was asked (a cached one): the stream ends with it.
    const response = answer.body as ResponseObject;
    const type = response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    this.add([{ type, sequence_number: 0, response }]);
    this.flush();
  }

  fail(error: GatewayError | ProviderError): void {
    this.add(this.assembler.fail(error).events);
    this.flush();
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
}

/**
 * Writes the stored events of a streamed background response after `after`, then the live ones as they
 * are stored, until its terminal event (or it was cancelled, or deleted), or the client left. `write`
 * returns false once the client is gone.
 */
export async function followResponseEvents(
  store: Store,
  hub: BackgroundHub,
  workspaceId: string,
  id: string,
  after: number,
  write: (event: StoredEventText) => boolean | Promise<boolean>,
): Promise<void> {
  let cursor = after;
  let endedAt: number | undefined;
  for (;;) {
    const events = await store.listResponseEvents(id, cursor, FOLLOW_PAGE);
    for (const stored of events) {
      cursor = stored.sequence_number;
      const type = (JSON.parse(stored.event) as { type: string }).type;
      if (!(await write({ type, data: stored.event }))) return;
      if (TERMINAL_EVENTS.has(type)) return;
    }
    if (events.length === FOLLOW_PAGE) continue;
    const response = await store.getResponse(workspaceId, id);
    if (!response || response.status === 'cancelled') {
      // Cancelled: the events stored before the cancel, then the end.
      const rest = response ? await store.listResponseEvents(id, cursor, FOLLOW_PAGE) : [];
      for (const stored of rest) {
        const type = (JSON.parse(stored.event) as { type: string }).type;
        if (!(await write({ type, data: stored.event }))) return;
      }
      return;
    }
    if (!(RUNNING_STATUSES as readonly string[]).includes(response.status)) {
      // Ended, and its terminal event already read (a cursor at or past it): nothing more will come.
      const last = await store.lastResponseEvent(id);
      if (last <= cursor && (await isTerminal(store, id, last))) return;
      endedAt ??= Date.now();
      if (Date.now() - endedAt > TERMINAL_GRACE_MS) return;
    }
    await hub.wait(id, FOLLOW_POLL_MS);
  }
}

async function isTerminal(store: Store, id: string, sequence: number): Promise<boolean> {
  const [event] = await store.listResponseEvents(id, sequence - 1, 1);
  return event !== undefined && TERMINAL_EVENTS.has((JSON.parse(event.event) as { type: string }).type);
}

export interface StoredEventText {
  type: string;
  /** The event's JSON text. */
  data: string;
}
