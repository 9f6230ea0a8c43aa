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
 *   records still buffered, the spans still queued);
 * - the connections to the store and Redis are closed after it; STOP_OVERRUN_MS past the grace period the
 *   process exits whatever is still pending (main.ts).
 */

/** Most of the grace period kept for what follows the cut. */
const MAX_FINAL_SHARE_MS = 5_000;
/** The final writes' least time, when the grace period (or what is left of it) is shorter. */
export const MIN_FINAL_WRITES_MS = 1_000;
/** How long past the grace period the process may take before it exits anyway. */
export const STOP_OVERRUN_MS = 3_000;

/** The part at the end of the grace period kept for giving back what was cut and the final writes. */
export function finalShareMs(graceMs: number): number {
  return Math.min(MAX_FINAL_SHARE_MS, Math.floor(graceMs / 5));
}

export interface StopPlan {
  /** When (Date.now() ms) what still runs is cut: connections closed, jobs stopped and given back. */
  cutAt: number;
  /** When the grace period ends: the final writes end by then, or MIN_FINAL_WRITES_MS after they start. */
  stopBy: number;
}

export function planStop(graceMs: number, now = Date.now()): StopPlan {
  const stopBy = now + graceMs;
  return { cutAt: stopBy - finalShareMs(graceMs), stopBy };
}

/** How long the final writes may take, begun now. */
export function finalWritesMs(plan: StopPlan, now = Date.now()): number {
  return Math.max(plan.stopBy - now, MIN_FINAL_WRITES_MS);
}
