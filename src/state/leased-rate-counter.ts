/**
 * Rate counters in Redis with leases (what production limiters call quota leases, or local batching), so
 * that a busy counter with plenty of room costs a node no Redis round trip per call.
 *
 * A take of one unit that needs one unit (a `requests` policy's) may ask the script for a lease: more units
 * charged in the same atomic step, which this node then hands to its next calls on that counter without
 * asking Redis. Every unit is charged before it is used, so all nodes together still never admit more
 * than the limit. Leases are kept small and short so that they do not keep room from other nodes:
 *
 * - A lease is about what this node admitted on the counter in the last LEASE_HORIZON_MS, at least 1 and at
 *   most limit / LEASE_SHARE (and MAX_LEASE): a limit below LEASE_SHARE is never leased and stays exact
 *   per call. A counter the node called less than twice in about the last `lifetimeMs` is not leased. The script grants only room that leaves half the limit free (redis-rate-counter.ts), so near
 *   the limit every call asks Redis. Whether the call itself is admitted does not depend on its lease.
 * - Unused units go back to Redis (adjust by −unused) at the next sweep, every `lifetimeMs`, and at close;
 *   and at once when the counter's limit goes down (a policy's value lowered): they were leased under the
 *   higher one.
 * - Calls that find no units while the node's lease request for the counter is in flight wait for it, as
 *   many as it asked units for; the others go to Redis on their own.
 * - A call over several counters stays all or none: what it took from leases is put back when Redis
 *   refuses the rest.
 *
 * The readings of a lease's units (the `x-ratelimit-*` headers) come from the counter as this node last
 * read it, its unused leased units counted as room, moved on by its own uses and by time; other nodes'
 * calls since then are not seen (docs/rate-limits.md#leases).
 */
import {
  levelAt,
  meterReading,
  meterTake,
  type Meter,
  type RateAdjust,
  type RateCounter,
  type RateReading,
  type RateTake,
  type RateTakeResult,
} from './rate-counter.js';
import type { LeasingTakeResult, RedisRateCounter } from './redis-rate-counter.js';
import { answerLost } from './types.js';

/** A lease covers about this long of the node's own recent rate on a counter. */
const LEASE_HORIZON_MS = 50;
/** A lease is at most this share of its limit: limits below it are never leased. */
const LEASE_SHARE = 64;
const MAX_LEASE = 1000;
const DEFAULT_LEASE_LIFETIME_MS = 200;
/** Unanswered takes kept for their give-back: past it (Redis away for long), those kept are forgotten. */
const MAX_UNANSWERED = 10_000;

export interface LeaseOptions {
  /** How long unused leased units may stay on this node before they go back. */
  lifetimeMs?: number;
  /** The counters' clock when not Redis's own (tests inject time). */
  clock?: (() => number) | undefined;
  /** Unused units could not be given back (they stay charged until the counter drains them). */
  onError?: ((error: Error) => void) | undefined;
}

/** A lease request in flight, and how many more calls may wait for it. */
interface PendingLease {
  granted: Promise<void>;
  settle: () => void;
  spots: number;
}

/** This node's view of one counter. */
interface Slot {
  key: string;
  periodMs: number;
  limit: number;
  /** Leased units not yet handed out. */
  units: number;
  /** The counter as last read, its unused leased units counted as room, moved on by the uses since. */
  meter: Meter | undefined;
  /** The counter's clock less this node's (`performance.now()`) at that reading. */
  clockOffset: number;
  pending: PendingLease | undefined;
  /** Calls since `windowStart` (this node's ms); the rate (per ms) of the window before. */
  calls: number;
  windowStart: number;
  lastRate: number;
  /** Calls waiting for Redis with this slot in hand: it is not dropped under them. */
  busy: number;
}

/** One unit, needing one unit: what a lease's units stand for. */
function leasable(take: RateTake): boolean {
  return take.need === 1 && take.cost === 1 && take.limit >= LEASE_SHARE;
}

export class LeasedRateCounter implements RateCounter {
  readonly kind = 'redis' as const;
  private readonly slots = new Map<string, Slot>();
  /** The takes Redis was asked for, of each charge sent whose answer was lost, until it is given back. */
  private readonly unanswered = new Map<string, RateTake[]>();
  private readonly lifetimeMs: number;
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly redis: RedisRateCounter,
    private readonly options: LeaseOptions = {},
  ) {
    this.lifetimeMs = options.lifetimeMs ?? DEFAULT_LEASE_LIFETIME_MS;
  }

  take(takes: readonly RateTake[], now?: number, charge?: string): RateTakeResult | Promise<RateTakeResult> {
    const waits = this.leasesToWaitFor(takes);
    if (waits) return Promise.all(waits).then(() => this.takeNow(takes, now, charge));
    return this.takeNow(takes, now, charge);
  }

  /** Only the counters the take asked Redis for were charged there, in the order it asked (its lease
   * units with them); the others' units came from leases and went back into them. */
  async giveBackUnanswered(charge: string, adjusts: readonly RateAdjust[], now?: number): Promise<boolean> {
    const remote = this.unanswered.get(charge);
    if (!remote) return false;
    this.unanswered.delete(charge);
    return this.redis.giveBackUnanswered(
      charge,
      remote.map(
        (take) =>
          adjusts.find((adjust) => adjust.key === take.key) ?? {
            key: take.key,
            periodMs: take.periodMs,
            limit: take.limit,
            units: 0,
          },
      ),
      now,
    );
  }

  adjust(adjusts: readonly RateAdjust[], now?: number): Promise<void> {
    return this.redis.adjust(adjusts, now);
  }

  /** Gives every unused unit back, and takes no more leases. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    await this.giveBack(this.unusedUnits());
    this.slots.clear();
  }

  /** The lease requests in flight this call waits for: its counters' with no units left, while spots last. */
  private leasesToWaitFor(takes: readonly RateTake[]): Array<Promise<void>> | undefined {
    let waits: Array<Promise<void>> | undefined;
    for (const take of takes) {
      const slot = this.slots.get(take.key);
      const pending = slot?.pending;
      if (!slot || !pending || pending.spots === 0 || slot.units > 0 || !leasable(take)) continue;
      pending.spots--;
      (waits ??= []).push(pending.granted);
    }
    return waits;
  }

  private takeNow(
    takes: readonly RateTake[],
    now: number | undefined,
    charge: string | undefined,
  ): RateTakeResult | Promise<RateTakeResult> {
    const localNow = performance.now();
    const slots = takes.map((take) => this.slotFor(take, localNow));
    const local = slots.map((slot) => {
      if (!slot || slot.units === 0) return false;
      slot.units--;
      return true;
    });
    if (local.every(Boolean)) {
      const readings = takes.map((take, i) => this.localReading(slots[i] as Slot, take, now, localNow, true));
      return { admitted: true, readings, refused: [] };
    }
    return this.takeRemotely(takes, slots, local, now, localNow, charge);
  }

  /** Asks Redis for the takes no lease covered, with a lease for each counter that warrants one. */
  private async takeRemotely(
    takes: readonly RateTake[],
    slots: ReadonlyArray<Slot | undefined>,
    local: readonly boolean[],
    now: number | undefined,
    localNow: number,
    charge: string | undefined,
  ): Promise<RateTakeResult> {
    const remote = takes.flatMap((_, i) => (local[i] ? [] : [i]));
    const leases = remote.map((i) => this.askLease(slots[i], takes[i], now, localNow));
    for (const slot of slots) if (slot) slot.busy++;
    let answer: LeasingTakeResult;
    try {
      answer = await this.redis.take(
        remote.map((i) => takes[i]),
        now,
        charge,
        leases,
      );
    } catch (error) {
      this.putBack(slots, local);
      // Sent, and its answer lost: Redis may have run it; what it asked Redis for is kept for its give-back.
      // An error Redis answered is no lost answer: what the script charged before it stands (answerLost).
      if (charge !== undefined && answerLost(error)) {
        if (this.unanswered.size >= MAX_UNANSWERED) this.unanswered.clear();
        this.unanswered.set(
          charge,
          remote.map((i) => takes[i]),
        );
      }
      throw error;
    } finally {
      this.release(slots, remote, leases);
    }
    const answeredAt = performance.now();
    remote.forEach((i, j) => this.recordReading(slots[i], takes[i], answer, j, answeredAt));
    if (!answer.admitted) this.putBack(slots, local);
    const readings: RateReading[] = [];
    remote.forEach((i, j) => (readings[i] = answer.readings[j]));
    takes.forEach((take, i) => {
      if (!local[i]) return;
      readings[i] = this.localReading(slots[i] as Slot, take, now, answeredAt, answer.admitted);
    });
    return { admitted: answer.admitted, readings, refused: answer.refused.map((j) => remote[j]) };
  }

  /** The units of lease a take asks for (0: none); asking, the slot's calls may wait for the answer. */
  private askLease(
    slot: Slot | undefined,
    take: RateTake,
    now: number | undefined,
    localNow: number,
  ): number {
    if (!slot || slot.pending) return 0;
    // A counter this node calls once in a while is not leased: its units would mostly go back unused.
    if (slot.calls + slot.lastRate * this.lifetimeMs < 2) return 0;
    // The script grants nothing when less than half the limit is free: then calls must not queue for it.
    const level = levelAt(slot.meter, now ?? localNow + slot.clockOffset, take.periodMs, take.limit);
    if (level + take.cost > take.limit / 2) return 0;
    const rate = Math.max(
      slot.lastRate,
      slot.calls / Math.max(localNow - slot.windowStart, LEASE_HORIZON_MS),
    );
    const cap = Math.min(Math.floor(take.limit / LEASE_SHARE), MAX_LEASE);
    const size = Math.min(cap, Math.max(1, Math.ceil(rate * LEASE_HORIZON_MS)));
    let settle: () => void = () => undefined;
    const granted = new Promise<void>((resolve) => (settle = resolve));
    slot.pending = { granted, settle, spots: size };
    return size;
  }

  /** The Redis answer for one of the call's counters: its new reading, and the lease's units. */
  private recordReading(
    slot: Slot | undefined,
    take: RateTake,
    answer: LeasingTakeResult,
    j: number,
    localNow: number,
  ): void {
    if (!slot) return;
    const read = answer.meters[j];
    const charged = answer.admitted ? take.cost : 0;
    // The units this node holds were charged in what Redis read; as room they are not used yet.
    slot.meter = { level: Math.max(0, read.level + charged - slot.units), at: read.at };
    slot.clockOffset = read.at - localNow;
    // A lease asked for under a limit lowered since (the slot's, set by a later call) goes straight back.
    if (answer.leased[j] > 0 && take.limit > slot.limit) {
      void this.giveBack([
        { key: slot.key, periodMs: slot.periodMs, limit: slot.limit, units: -answer.leased[j] },
      ]);
      return;
    }
    slot.units += answer.leased[j];
  }

  /** A take from a slot's lease: the counter as last read, moved on to now; charged when the call is in. */
  private localReading(
    slot: Slot,
    take: RateTake,
    now: number | undefined,
    localNow: number,
    charge: boolean,
  ): RateReading {
    const at = now ?? localNow + slot.clockOffset;
    // A call refused for another counter put its unit back: this counter reads as it stands.
    if (!charge) return meterReading(slot.meter, at, take);
    const decision = meterTake(slot.meter, at, take);
    if (decision.admitted) slot.meter = { level: decision.level, at };
    return decision.reading;
  }

  /** A refused (or failed) call's units go back into their leases. */
  private putBack(slots: ReadonlyArray<Slot | undefined>, local: readonly boolean[]): void {
    slots.forEach((slot, i) => {
      if (slot && local[i]) slot.units++;
    });
  }

  private release(
    slots: ReadonlyArray<Slot | undefined>,
    remote: readonly number[],
    leases: readonly number[],
  ): void {
    for (const slot of slots) if (slot) slot.busy--;
    remote.forEach((i, j) => {
      const slot = slots[i];
      if (!slot || leases[j] === 0) return;
      // The waiters resume after this call's readings and units are recorded (they run as microtasks).
      slot.pending?.settle();
      slot.pending = undefined;
    });
  }

  /** The slot of a leasable take's counter, made on first use (the sweeps drop idle ones). */
  private slotFor(take: RateTake, localNow: number): Slot | undefined {
    if (!leasable(take) || this.closed) return undefined;
    let slot = this.slots.get(take.key);
    if (!slot) {
      slot = {
        key: take.key,
        periodMs: take.periodMs,
        limit: take.limit,
        units: 0,
        meter: undefined,
        clockOffset: 0,
        pending: undefined,
        calls: 0,
        windowStart: localNow,
        lastRate: 0,
        busy: 0,
      };
      this.slots.set(take.key, slot);
      this.sweeper ??= setInterval(() => void this.sweep(), this.lifetimeMs).unref();
    }
    // A changed policy value applies at once. Units leased under a higher limit would admit calls that the
    // counter, at its lowered limit, may have no room for (other nodes' calls are not in this node's view):
    // they go back, sent before this call's take on the same connection, and Redis decides the call. A
    // raised limit keeps them: they were charged.
    if (take.limit < slot.limit && slot.units > 0) {
      void this.giveBack([{ key: slot.key, periodMs: take.periodMs, limit: take.limit, units: -slot.units }]);
      slot.units = 0;
    }
    slot.periodMs = take.periodMs;
    slot.limit = take.limit;
    slot.calls++;
    return slot;
  }

  /** Every `lifetimeMs`: unused units go back, rates move to the next window, idle slots go. */
  private sweep(): Promise<void> {
    const localNow = performance.now();
    const unused = this.unusedUnits();
    for (const [key, slot] of this.slots) {
      slot.lastRate = slot.calls / Math.max(localNow - slot.windowStart, 1);
      if (slot.calls === 0 && slot.busy === 0) this.slots.delete(key);
      slot.calls = 0;
      slot.windowStart = localNow;
    }
    if (this.slots.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
    return this.giveBack(unused);
  }

  /** Takes the unused units out of every slot, as the adjustments that give them back. */
  private unusedUnits(): RateAdjust[] {
    const unused: RateAdjust[] = [];
    for (const slot of this.slots.values()) {
      if (slot.units === 0) continue;
      unused.push({ key: slot.key, periodMs: slot.periodMs, limit: slot.limit, units: -slot.units });
      slot.units = 0;
    }
    return unused;
  }

  private async giveBack(unused: readonly RateAdjust[]): Promise<void> {
    if (unused.length === 0) return;
    try {
      await this.redis.adjust(unused, this.options.clock?.());
    } catch (error) {
      this.options.onError?.(error as Error);
    }
  }
}
