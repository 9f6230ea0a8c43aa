// The fake upstream's clock: answers at a deadline, and keeps how long its answers took.
//
// A Node timer counts its delay in whole milliseconds from the event loop's clock, which is read once per
// turn and so already stale when the timer is set; it fires at the loop's next wake-up after that. A
// "20 ms" timer set for what is left of the wait therefore fires up to a millisecond early, or late
// when the process is busy. Spinning for the exact moment would cost a core on a 2-core machine, so
// the timer is moved instead, by the error it has shown so far. The answers fall into clusters about a
// millisecond apart, so their median says little; what a concurrency's rate follows is their mean
// (rate = concurrency / mean time), so the estimate follows the mean error, each timer's share bounded
// so that a stall of the whole process (another program took the core) is not learnt.

export interface ServiceTimeReport {
  count: number;
  mean_ms: number | null;
  p50_ms: number | null;
  p99_ms: number | null;
  min_ms: number | null;
  max_ms: number | null;
}

/** How much one timer's lateness moves the estimate. */
const LEARNING_RATE = 0.02;
/** The most one timer's lateness counts for, either way, ms. */
const MAX_COUNTED_MS = 2;
/** The most the timers are moved by, either way, ms. */
const MAX_CORRECTION_MS = 2;
/** Service times kept between two reports (a bench's phase). */
const MAX_SAMPLES = 200_000;

export function createServiceClock() {
  /** How late the timers fire, on average (negative: early), ms. */
  let lateness = 0;
  let samples: number[] = [];

  return {
    /** Calls `then` at `deadline` (a `performance.now()` time), as near as the event loop allows. */
    wait(deadline: number, then: () => void): void {
      const remaining = deadline - performance.now();
      setTimeout(
        () => {
          const late = performance.now() - deadline;
          const counted = Math.min(Math.max(late, -MAX_COUNTED_MS), MAX_COUNTED_MS);
          lateness = Math.min(
            Math.max(lateness + LEARNING_RATE * counted, -MAX_CORRECTION_MS),
            MAX_CORRECTION_MS,
          );
          then();
        },
        Math.max(remaining - lateness, 0),
      );
    },

    record(ms: number): void {
      if (samples.length < MAX_SAMPLES) samples.push(ms);
    },

    /** The service times since the last report. */
    report(): ServiceTimeReport {
      const sorted = samples.sort((a, b) => a - b);
      samples = [];
      const at = (q: number) => round(sorted[Math.min(Math.floor(q * sorted.length), sorted.length - 1)]);
      if (sorted.length === 0)
        return { count: 0, mean_ms: null, p50_ms: null, p99_ms: null, min_ms: null, max_ms: null };
      return {
        count: sorted.length,
        mean_ms: round(sorted.reduce((sum, ms) => sum + ms, 0) / sorted.length),
        p50_ms: at(0.5),
        p99_ms: at(0.99),
        min_ms: round(sorted[0]),
        max_ms: round(sorted[sorted.length - 1]),
      };
    },
  };
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
