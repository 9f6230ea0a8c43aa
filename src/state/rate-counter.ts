/**
 * Rate counters for rate-limit policies: GCRA (the generic cell rate algorithm), one number per counter.
 *
 * A counter of `limit` units per `periodMs` keeps a theoretical arrival time, TAT: the moment its bucket
 * would be full again. Each unit moves it `periodMs / limit` later; a call is admitted while
 * `max(TAT, now) + need × interval − now ≤ periodMs`, i.e. while the bucket has `need` units of room. So
 * `limit` units fit at once and room comes back continuously, one unit every interval: nothing ever
 * admits more than `limit` units within any `periodMs` of a full bucket, and a refused caller waits for
 * one interval's room, not for the end of a window.
 *
 * `take` checks and charges several counters as one atomic step (all or none: the policies that met one
 * call), on one node (memory) or on every node together (Redis, one Lua script). `adjust` moves a counter
 * by a signed number of units afterwards (a token reservation settled to what the answer used).
 */

export interface RateTake {
  key: string;
  periodMs: number;
  limit: number;
  /** Units of room the call needs to be admitted (1 for a request; 1 for tokens: any room left). */
  need: number;
  /** Units charged when admitted (1 for a request; the reservation for tokens). */
  cost: number;
}

export interface RateReading {
  /** Whole units of room left (after this call's charge when admitted). */
  remaining: number;
  /** Milliseconds until the counter is back to its full `limit`. */
  resetMs: number;
  /** Refused only: milliseconds until `need` units of room are back. */
  retryAfterMs: number;
}

export interface RateTakeResult {
  admitted: boolean;
  /** One per take, in order. When refused nothing was charged; `refused` lists the takes that had no room. */
  readings: RateReading[];
  refused: number[];
}

export interface RateAdjust {
  key: string;
  periodMs: number;
  limit: number;
  /** Signed units: positive charges more, negative gives back. */
  units: number;
}

export interface RateCounter {
  readonly kind: 'memory' | 'redis';
  /** `now` (ms) when the caller's clock governs (tests); the counter's own clock otherwise. */
  take(takes: readonly RateTake[], now?: number): Promise<RateTakeResult>;
  adjust(adjusts: readonly RateAdjust[], now?: number): Promise<void>;
}

/** One counter's decision, pure: what both implementations compute (the Lua script is its twin). */
export function gcraReading(
  tat: number | undefined,
  now: number,
  take: Pick<RateTake, 'periodMs' | 'limit' | 'need' | 'cost'>,
): { admitted: boolean; tat: number; reading: RateReading } {
  const interval = take.periodMs / take.limit;
  const from = tat === undefined || tat < now ? now : tat;
  const needed = from + take.need * interval - now;
  if (needed > take.periodMs) {
    return {
      admitted: false,
      tat: from,
      reading: {
        remaining: roomOf(from, now, take.periodMs, interval),
        resetMs: from - now,
        retryAfterMs: needed - take.periodMs,
      },
    };
  }
  const next = from + take.cost * interval;
  return {
    admitted: true,
    tat: next,
    reading: { remaining: roomOf(next, now, take.periodMs, interval), resetMs: next - now, retryAfterMs: 0 },
  };
}

/** A counter's TAT after `adjust`; undefined when the counter is back to full (its key may go). */
export function gcraAdjusted(
  tat: number | undefined,
  now: number,
  adjust: Pick<RateAdjust, 'periodMs' | 'limit' | 'units'>,
): number | undefined {
  const interval = adjust.periodMs / adjust.limit;
  const from = tat === undefined || tat < now ? now : tat;
  const next = from + adjust.units * interval;
  return next > now ? next : undefined;
}

function roomOf(tat: number, now: number, periodMs: number, interval: number): number {
  return Math.max(0, Math.floor((periodMs - (tat - now)) / interval + 1e-9));
}
