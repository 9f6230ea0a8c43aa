/**
 * Rate counters in process memory, for a single gateway node: each counter's meter in an LRU bounded in
 * size, kept until the bucket has drained. JavaScript runs one `take` at a time, so a take over several
 * counters is atomic without more, and answers at once.
 */
import { LRUCache } from 'lru-cache';
import {
  drainMs,
  meterAdjusted,
  meterReading,
  meterTake,
  type Meter,
  type RateCounter,
  type RateTakeResult,
} from './rate-counter.js';

export class MemoryRateCounter implements RateCounter {
  readonly kind = 'memory' as const;
  private cache: LRUCache<string, Meter> | undefined;

  constructor(
    private readonly clock: () => number = Date.now,
    private readonly maxCounters = 100_000,
  ) {}

  /**
   * Made at the first take: an LRU allocates its slots (and, with a first TTL, two clocks per slot) for
   * its whole size at once, about 4 MB for 100,000 counters, which a node without rate-limit policies
   * would carry for nothing.
   */
  private get meters(): LRUCache<string, Meter> {
    return (this.cache ??= new LRUCache<string, Meter>({ max: this.maxCounters }));
  }

  take(takes: Parameters<RateCounter['take']>[0], now = this.clock()): RateTakeResult {
    const decisions = takes.map((take) => meterTake(this.meters.get(take.key), now, take));
    const refused: number[] = [];
    decisions.forEach((decision, i) => {
      if (!decision.admitted) refused.push(i);
    });
    if (refused.length === 0) {
      decisions.forEach((decision, i) => this.store(takes[i], decision.level, now));
      return { admitted: true, readings: decisions.map((d) => d.reading), refused };
    }
    // Nothing was charged: the counters that had room read as they stand.
    const readings = decisions.map((d, i) =>
      d.admitted ? meterReading(this.meters.get(takes[i].key), now, takes[i]) : d.reading,
    );
    return { admitted: false, readings, refused };
  }

  async adjust(adjusts: Parameters<RateCounter['adjust']>[0], now = this.clock()): Promise<void> {
    for (const adjust of adjusts)
      this.store(adjust, meterAdjusted(this.meters.get(adjust.key), now, adjust), now);
  }

  /** The entry lives until its bucket has drained (on the real clock; a stale entry drains to empty). */
  private store(counter: { key: string; periodMs: number; limit: number }, level: number, now: number): void {
    if (level <= 0) this.meters.delete(counter.key);
    else
      this.meters.set(
        counter.key,
        { level, at: now },
        { ttl: drainMs(level, counter.periodMs, counter.limit) },
      );
  }

  async close(): Promise<void> {}
}
