/** Reading a streamed background response's events from the store, the stored ones then the live ones. */
import type { Store } from '../../store/types.js';
import { RUNNING_STATUSES } from './background.js';
import type { BackgroundHub } from './background-hub.js';

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
      if (TERMINAL_EVENTS.has(type)) {
        // A run cancelled from another node may have stored its end before it heard of the cancel: the
        // response is cancelled, whatever that event says.
        const response = await store.getResponse(workspaceId, id);
        if (response?.status !== 'cancelled') await write({ type, data: stored.event });
        return;
      }
      if (!(await write({ type, data: stored.event }))) return;
    }
    if (events.length === FOLLOW_PAGE) continue;
    const response = await store.getResponse(workspaceId, id);
    if (!response || response.status === 'cancelled') {
      // Cancelled: the events stored before the cancel, then the end.
      const rest = response ? await store.listResponseEvents(id, cursor, FOLLOW_PAGE) : [];
      for (const stored of rest) {
        const type = (JSON.parse(stored.event) as { type: string }).type;
        if (TERMINAL_EVENTS.has(type) || !(await write({ type, data: stored.event }))) return;
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
