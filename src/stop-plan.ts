/**
 * How a node's stop (SIGTERM/SIGINT) spends GATEWAY_SHUTDOWN_GRACE_MS. An orchestrator kills a process that
 * outlives its own timeout (Kubernetes: terminationGracePeriodSeconds, 30 s by default), and a node killed
 * before it gave its jobs back leaves their leases to lapse, where they count as attempts; so the whole stop
 * fits in one grace period, whatever is still running:
 *
 * - until `cutAt`, in-flight requests (streams included) and the jobs the node runs go on, together;
 * - at `cutAt` the connections still open are closed and the jobs still running are stopped and given back;
 *   then the calls out that no client or job waits on (an async hook's webhook, say) are ended;
 * - the rest of the grace period (`finalShareMs`) is for that giving back and the final writes (the log
 *   records still buffered, the spans still queued), until `writesBy` (finalWritesBy): a giving back that
 *   has not ended by then (the store no longer answers) is left;
 * - its last part (`closeShareMs`) is for closing the connections (the store, Redis, S3), each in turn with
 *   its share of what is left (stop-closes.ts): one that does not answer is named in the log and torn down
 *   (its connections destroyed), and the others are still closed. STOP_OVERRUN_MS past the grace period the process exits whatever is still
 *   pending (main.ts).
 *
 * Each part after the cut has its least time, counted from the cut as it came (cutCame): a process held past
 * the planned cut (busy, or starved of CPU) cuts late. Those least times are cut down in proportion when the
 * cut came so late that they would end past `endBy`, LEAST_AFTER_CUT_MS past the grace period: a stop whose
 * every part is bounded then still ends, its records not written counted in the log, well before the overrun's
 * exit, which is for a stop that hangs.
 */

/** Most of the grace period kept for what follows the cut. */
const MAX_FINAL_SHARE_MS = 5_000;
/** The least time after the cut for giving back what was cut and the final writes, when the grace period
 * is shorter. */
export const MIN_FINAL_WRITES_MS = 1_000;
/** The final writes' least time, when the giving back took what was left for both. */
export const MIN_LAST_WRITES_MS = 500;
/** Most of the final share kept for closing the connections. */
const MAX_CLOSE_SHARE_MS = 1_000;
/** The closes' least time, all together, when what is left of the grace period is shorter. */
export const MIN_CLOSES_MS = 500;
/** How long past the grace period the process may take before it exits anyway. */
export const STOP_OVERRUN_MS = 3_000;
/** What follows the cut at the least, all together: the giving back, the final writes, the closes. Also how
 * long past the grace period a stop ends at the latest, whenever its cut came. */
const LEAST_AFTER_CUT_MS = MIN_FINAL_WRITES_MS + MIN_LAST_WRITES_MS + MIN_CLOSES_MS;

/** The part at the end of the grace period kept for giving back what was cut and the final writes. */
export function finalShareMs(graceMs: number): number {
  return Math.min(MAX_FINAL_SHARE_MS, Math.floor(graceMs / 5));
}

/** The part at the end of the final share kept for closing the connections. */
export function closeShareMs(graceMs: number): number {
  return Math.min(MAX_CLOSE_SHARE_MS, Math.floor(finalShareMs(graceMs) / 4));
}

export interface StopPlan {
  /** When (Date.now() ms) what still runs is cut: connections closed, jobs stopped and given back. */
  cutAt: number;
  /** When the giving back and the final writes end, or MIN_FINAL_WRITES_MS after the cut. */
  writesBy: number;
  /** When the grace period ends: the connections are closed by then, or MIN_CLOSES_MS after they start. */
  stopBy: number;
  /** When the stop ends at the latest, whenever its cut came: LEAST_AFTER_CUT_MS past the grace period. */
  endBy: number;
}

export function planStop(graceMs: number, now = Date.now()): StopPlan {
  const stopBy = now + graceMs;
  return {
    cutAt: stopBy - finalShareMs(graceMs),
    writesBy: stopBy - closeShareMs(graceMs),
    stopBy,
    endBy: stopBy + LEAST_AFTER_CUT_MS,
  };
}

/**
 * The plan once its cut has come, at `at` (Date.now() ms): later than planned when the event loop was held
 * past it (a busy process, or one starved of CPU). What follows the cut then counts from it, its least
 * times kept, rather than from a time the held loop has spent already.
 */
export function cutCame(plan: StopPlan, at: number): StopPlan {
  return { ...plan, cutAt: Math.max(plan.cutAt, at) };
}

/** The part of each least time after the cut that is kept: all of it unless the cut came less than
 * LEAST_AFTER_CUT_MS before `endBy`, then what fits before it, down to none. */
function leastKept(plan: StopPlan): number {
  return Math.min(1, Math.max(0, (plan.endBy - plan.cutAt) / LEAST_AFTER_CUT_MS));
}

/** When (Date.now() ms) the giving back of what was cut, and then the final writes, end: MIN_FINAL_WRITES_MS
 * after the cut at the least (the cut as it came: cutCame), less when the cut came too late for it. */
export function finalWritesBy(plan: StopPlan): number {
  return Math.max(plan.writesBy, plan.cutAt + MIN_FINAL_WRITES_MS * leastKept(plan));
}

/** How long the final writes may take, begun now: never into the closes' least time before `endBy`. */
export function finalWritesMs(plan: StopPlan, now = Date.now()): number {
  const kept = leastKept(plan);
  const least = Math.max(finalWritesBy(plan) - now, MIN_LAST_WRITES_MS * kept);
  return Math.max(0, Math.min(least, plan.endBy - MIN_CLOSES_MS * kept - now));
}

/** How long the closes may take, all together, begun now: never past `endBy`. */
export function closesMs(plan: StopPlan, now = Date.now()): number {
  return Math.max(0, Math.min(Math.max(plan.stopBy - now, leastClosesMs(plan)), plan.endBy - now));
}

/** The closes' least time, all together (stop-closes.ts), less when the cut came too late for it. */
export function leastClosesMs(plan: StopPlan): number {
  return MIN_CLOSES_MS * leastKept(plan);
}
