/**
 * Rate counters for rate-limit policies: GCRA (the generic cell rate algorithm), kept in its "leaky bucket
 * as a meter" form — per counter, the units in the bucket and when that was true.
 *
 * A counter of `limit` units per `periodMs` drains continuously, `limit` units per period. A call is
 * admitted while the bucket has `need` units of room (`level + need ≤ limit`), and then adds `cost`. So
 * `limit` units fit at once, and room comes back steadily, one unit every `periodMs / limit`: no more than
 * `limit` units are ever admitted from a full bucket at once, and a refused caller waits for one unit's
 * room, not for the end of a window. Kept in units (not as a theoretical arrival time), a policy whose
 * `value` changes applies the new limit to what was used at once.
 *
 * `take` checks and charges several counters as one atomic step (all or none: the policies that met one
 * call), on one node (memory) or on every node together (Redis, one Lua script, with leases of room kept
 * on the node: leased-rate-counter.ts). It answers at once, without a promise, when it decides without
 * waiting (memory; a lease in hand), so the caller need not arm a timeout. `adjust` moves a counter by a
 * signed number of units afterwards (a token reservation settled to what the answer used).
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
  /** One per take, in order. When refused nothing was charged (a take that had room reads its counter as it
   * stands); `refused` lists the takes that had no room. */
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
  /** `now` (ms) when the caller's clock governs (tests); the counter's own clock otherwise. `charge`: a
   * name unique to this take, for `giveBackUnanswered` should its answer be lost. */
  take(takes: readonly RateTake[], now?: number, charge?: string): RateTakeResult | Promise<RateTakeResult>;
  /**
   * A take named `charge` that failed without an answer (its connection lost, or timed out) may have been
   * charged all the same (Redis). If it was, `adjusts` (by key, signed) and any lease it was granted are
   * given back, once; if it was not, nothing is. Resolves whether it was. Absent where an answer cannot be
   * lost (memory).
   */
  giveBackUnanswered?(charge: string, adjusts: readonly RateAdjust[], now?: number): Promise<boolean>;
  adjust(adjusts: readonly RateAdjust[], now?: number): Promise<void>;
  /** Gives back what this node holds (leased room) and stops its timers. */
  close(): Promise<void>;
}

/** A counter's state: `level` units in the bucket at time `at` (ms). */
export interface Meter {
  level: number;
  at: number;
}

/** Float slack in comparisons, far below one unit. */
const EPSILON = 1e-9;

/** The units in the bucket at `now`, after draining since `meter.at`. */
export function levelAt(meter: Meter | undefined, now: number, periodMs: number, limit: number): number {
  if (!meter) return 0;
  const drained = (Math.max(0, now - meter.at) * limit) / periodMs;
  return Math.max(0, meter.level - drained);
}

/** One counter's decision, pure: what both implementations compute (the Lua script is its twin). */
export function meterTake(
  meter: Meter | undefined,
  now: number,
  take: Pick<RateTake, 'periodMs' | 'limit' | 'need' | 'cost'>,
): { admitted: boolean; level: number; reading: RateReading } {
  const { periodMs, limit } = take;
  const unitMs = periodMs / limit;
  const level = levelAt(meter, now, periodMs, limit);
  if (level + take.need > limit + EPSILON) {
    return {
      admitted: false,
      level,
      reading: {
        remaining: roomOf(level, limit),
        resetMs: level * unitMs,
        retryAfterMs: (level + take.need - limit) * unitMs,
      },
    };
  }
  const next = level + take.cost;
  return {
    admitted: true,
    level: next,
    reading: { remaining: roomOf(next, limit), resetMs: next * unitMs, retryAfterMs: 0 },
  };
}

/** A counter as it stands at `now`, charged nothing: what a take refused for another counter reads. */
export function meterReading(
  meter: Meter | undefined,
  now: number,
  take: Pick<RateTake, 'periodMs' | 'limit'>,
): RateReading {
  const level = levelAt(meter, now, take.periodMs, take.limit);
  return {
    remaining: roomOf(level, take.limit),
    resetMs: (level * take.periodMs) / take.limit,
    retryAfterMs: 0,
  };
}

/** A counter's level after `adjust`; 0 means empty (its key may go). */
export function meterAdjusted(
  meter: Meter | undefined,
  now: number,
  adjust: Pick<RateAdjust, 'periodMs' | 'limit' | 'units'>,
): number {
  return Math.max(0, levelAt(meter, now, adjust.periodMs, adjust.limit) + adjust.units);
}

/** How long a counter at `level` takes to drain empty: its key's lifetime. */
export function drainMs(level: number, periodMs: number, limit: number): number {
  return Math.max(1, Math.ceil((level * periodMs) / limit));
}

function roomOf(level: number, limit: number): number {
  return Math.max(0, Math.floor(limit - level + EPSILON));
}
