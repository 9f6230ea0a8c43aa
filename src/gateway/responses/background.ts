/**
 * Background responses (`background: true`, docs/responses.md): the response is stored `queued` with its
 * run (the call that created it, the request the pipeline carries) and a `response.background` job on the
 * store's queue; a node's worker (background-worker.ts) claims the job under a lease and runs the call
 * through `execute` like any other. A streamed one's events are kept in the store as they come
 * (response-event-log.ts), numbered for the client, so that the request that created it and any later
 * `GET /responses/{id}?stream=true&starting_after=N`, on any node, read the same stream
 * (follow-response-events.ts); background-hub.ts is one node's shortcut to both and to a cancel.
 */
import type { ResponseEvent, ResponseObject } from './response-types.js';

export const BACKGROUND_JOB = 'response.background';

export interface BackgroundPayload {
  workspace_id: string;
  response_id: string;
  /** Runs of the response's earlier jobs cut short by their node, when a job was put back to wait out a
   * rate limit (background-worker.ts): they count towards BACKGROUND_RUNS. */
  earlier_runs?: number;
  /** The index of the client's first input item in the run's request (PreparedResponseCall.inputOffset),
   * for an error about an item to name it as the client did; absent on jobs queued before it was kept. */
  input_offset?: number;
}

/** The runs of one response: a run cut short by its node's end (the lease ran out) is run again, until
 * this many have begun; the claim after that fails the response. A run its node gave back as it stopped
 * cleanly is not counted. */
export const BACKGROUND_RUNS = 2;
/** The job's attempts: the runs, and claims to spare for failing the response after them. */
export const BACKGROUND_JOB_ATTEMPTS = BACKGROUND_RUNS + 3;

/** How long after its creation a background response may still wait for a rate-limit policy's window
 * (a run refused later fails with the 429): a day, a batch's window. */
export const BACKGROUND_RATE_LIMIT_WAIT_MS = 24 * 60 * 60 * 1000;

/** Background responses one node runs at once (more wait `queued` for a node with room). */
export const BACKGROUND_RESPONSE_CONCURRENCY = 32;
/** How long a streamed background response's events (and its run) are kept once it has ended. */
export const BACKGROUND_EVENT_RETENTION_MS = 60 * 60 * 1000;

/** A foreground response still `in_progress` this long after its last write was left so by a node that
 * stopped: no answer streams for six hours. */
export const FOREGROUND_INTERRUPTED_AFTER_MS = 6 * 60 * 60 * 1000;

/** Statuses of a background response that has not ended. */
export const RUNNING_STATUSES = ['queued', 'in_progress'] as const;

export function eventText(event: ResponseEvent): string {
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
