// The fake upstream's clock: answers at a deadline, and keeps how long its answers took.
//
// A Node timer fires when the event loop's millisecond clock (read once per turn, so already stale when
// the timer is set) says its delay has passed, and then only at the loop's next wake-up: a 20 ms timer
// fires 0.5-2 ms late, and more when the process is busy. Spinning for the last millisecond would cost
// a core on a 2-core machine, so the timer is set early instead, by the lateness it has shown so far.
// The estimate moves by a bounded step towards each timer's lateness, so it follows the median: a
// stall of the whole process (another program took the core) is not learnt as lateness to come.

export interface ServiceTimeReport {
  count: number;
  mean_ms: number | null;
  p50_ms: number | null;
  p99_ms: number | null;
  min_ms: number | null;
  max_ms: number | null;
}

/** How far one timer moves the estimate of the timers' lateness, at most, ms. */
const STEP_MS = 0.02;
/** The most the timers are set early by, ms. */
const MAX_LATENESS_MS = 2;
/** Service times kept between two reports (a bench's phase). */
const MAX_SAMPLES = 200_000;

export function createServiceClock() {
  let lateness = 1; // ms
  let samples: number[] = [];

  return {
    /** Calls `then` at `deadline` (a `performance.now()` time), as near as the event loop allows. */
    wait(deadline: number, then: () => void): void {
      const remaining = deadline - performance.now();
      setTimeout(
        () => {
          const late = performance.now() - deadline;
          lateness = Math.min(Math.max(lateness + Math.sign(late) * STEP_MS, 0), MAX_LATENESS_MS);
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
