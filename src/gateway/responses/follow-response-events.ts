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
  /** The response was read ended: its every event is in the store, read to the end then. */
  let ended = false;
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
    if (ended) return;
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
      // Its end is stored in the transaction that stores its last events (response-event-log.ts, and the
      // worker's giving up): they are all there now, whether or not a terminal event is among them.
      ended = true;
      continue;
    }
    await hub.wait(id, FOLLOW_POLL_MS);
  }
}

export interface StoredEventText {
  type: string;
  /** The event's JSON text. */
  data: string;
}
