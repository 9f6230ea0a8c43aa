/**
 * Rate counters in process memory, for a single gateway node: each counter's TAT in an LRU bounded in
 * size, its entry kept until the counter is full again. JavaScript runs one `take` at a time, so a take
 * over several counters is atomic without more.
 */
import { LRUCache } from 'lru-cache';
import { gcraAdjusted, gcraReading, type RateCounter, type RateTakeResult } from './rate-counter.js';

export class MemoryRateCounter implements RateCounter {
  readonly kind = 'memory' as const;
  private readonly tats: LRUCache<string, number>;

  constructor(
    private readonly clock: () => number = Date.now,
    maxCounters = 100_000,
  ) {
    this.tats = new LRUCache<string, number>({ max: maxCounters });
  }

  async take(takes: Parameters<RateCounter['take']>[0], now = this.clock()): Promise<RateTakeResult> {
    const decisions = takes.map((take) => gcraReading(this.tats.get(take.key), now, take));
    const refused: number[] = [];
    decisions.forEach((decision, i) => {
      if (!decision.admitted) refused.push(i);
    });
    if (refused.length === 0) {
      decisions.forEach((decision, i) =>
        this.tats.set(takes[i].key, decision.tat, { ttl: ttlOf(decision.tat, now) }),
      );
    }
    return { admitted: refused.length === 0, readings: decisions.map((d) => d.reading), refused };
  }

  async adjust(adjusts: Parameters<RateCounter['adjust']>[0], now = this.clock()): Promise<void> {
    for (const adjust of adjusts) {
      const next = gcraAdjusted(this.tats.get(adjust.key), now, adjust);
      if (next === undefined) this.tats.delete(adjust.key);
      else this.tats.set(adjust.key, next, { ttl: ttlOf(next, now) });
    }
  }
}

/** The entry lives until its counter is full again (on the real clock; a stale entry reads as full). */
function ttlOf(tat: number, now: number): number {
  return Math.max(1, Math.ceil(tat - now));
}
