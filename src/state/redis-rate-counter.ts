/**
 * Rate counters in Redis, shared by every gateway node: each `take` and `adjust` is one Lua script, so
 * the check and the charge of every counter a call meets happen as one step that no other node's call
 * can interleave with. Time is Redis's own clock (`TIME`), one clock for every node, unless the caller
 * hands in `now` (tests inject time). A counter is the string `<level>,<at ms>`, expiring once drained
 * (the level written to nine decimals, and a charge's mark after them).
 *
 * A take named by its caller (a `charge`) leaves a mark in the digits of each counter it charged, past the
 * ninth decimal of the level, where they change no reading (less than a billionth of a unit) and are
 * dropped by the counter's next write; with it, the unit count of the lease it was granted there. A take
 * whose answer was lost is given back by `giveBackUnanswered` only while its mark is still found on any one
 * of its counters (a counter's next write drops it there): so never when Redis did not run it, once at most,
 * and with no write or key added to the take itself. Then every counter's units go back, and the lease of
 * each counter still marked; a counter written since keeps its lease charged.
 *
 * A take may also ask for a lease (leased-rate-counter.ts): units charged beyond its cost, for this node
 * to hand out later without a round trip. Whether the call is admitted does not depend on it: an
 * admitted take is granted as much of the lease as fits while leaving at least half the limit free (room
 * near the limit is never leased), and the script answers what it granted.
 */
import {
  meterReading,
  meterTake,
  type Meter,
  type RateAdjust,
  type RateCounter,
  type RateTake,
  type RateTakeResult,
} from './rate-counter.js';
import type { ScriptingState } from './types.js';

/**
 * The longest a counter's key lives: 10¹⁵ ms, some 30,000 years. A bucket charged far past its limit (a
 * reservation of 10¹² tokens on a limit of one a day) would take longer to drain than Redis can say.
 */
const MAX_TTL_MS = 1e15;

/** The digits a charge's mark takes in a level, after its nine decimals: MARK_DIGITS of the charge's name,
 * then LEASE_DIGITS of the lease it was granted there (at most 1,000 units). */
const MARK_DIGITS = 10;
const LEASE_DIGITS = 4;

/** A charge's name as the digits of its mark: its 32-bit FNV-1a hash, so another charge's mark is the same
 * once in some 4 billion (a hash per take: sha1 here cost more than the script's own extra work). */
function markOf(charge: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < charge.length; i++) hash = Math.imul(hash ^ charge.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString().padStart(MARK_DIGITS, '0');
}

/** `now`, and the level of a key at `now` (the twin of rate-counter.ts `levelAt`). */
const PRELUDE = `
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
-- The level as written, and the digits past its ninth decimal (a charge's mark), if any.
local function parts_of(stored)
  local level, at = string.match(stored, '^([^,]+),(.+)$')
  local dot = string.find(level, '.', 1, true)
  if not dot then return level, at, '' end
  return string.sub(level, 1, dot + 9), at, string.sub(level, dot + 10)
end
local function level_of(key, period, limit)
  local stored = redis.call('GET', key)
  if not stored then return 0 end
  local level, at = parts_of(stored)
  local drained = math.max(0, now - tonumber(at)) * limit / period
  return math.max(0, tonumber(level) - drained)
end
local function store(key, level, period, limit, mark)
  if level <= 0 then
    redis.call('DEL', key)
  else
    -- At most MAX_TTL_MS, written as digits: Redis refuses a lifetime past its range, and one written as
    -- Lua writes a large number (1e+17).
    local ttl = math.min(math.max(1, math.ceil(level * period / limit)), ${MAX_TTL_MS})
    local value = string.format('%.9f', level) .. (mark or '') .. string.format(',%.3f', now)
    redis.call('SET', key, value, 'PX', string.format('%.0f', ttl))
  end
end`;

/** Reads every counter, then charges them all only if each had room, each with the lease it asked for as
 * far as it fits below half the limit, and the charge's mark when ARGV[2] names one. Answers `now`, then for
 * each counter the level it read, whether it had room (1) or not (0), and the units of lease it was granted. */
const TAKE = `${PRELUDE}
local counters = (#ARGV - 2) / 5
local results = {string.format('%.3f', now)}
local levels = {}
local admitted = true
for i = 1, counters do
  local base = 2 + (i - 1) * 5
  local period, limit = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2])
  local level = level_of(KEYS[i], period, limit)
  local room = 1
  if level + tonumber(ARGV[base + 3]) > limit + 1e-9 then
    admitted = false
    room = 0
  end
  levels[i] = level
  results[3 * i - 1] = string.format('%.9f', level)
  results[3 * i] = room
  results[3 * i + 1] = 0
end
if admitted then
  for i = 1, counters do
    local base = 2 + (i - 1) * 5
    local period, limit = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2])
    local charged = levels[i] + tonumber(ARGV[base + 4])
    local lease = math.min(tonumber(ARGV[base + 5]), math.floor(limit / 2 - charged + 1e-9))
    if lease > 0 then
      charged = charged + lease
      results[3 * i + 1] = lease
    end
    local mark = nil
    if ARGV[2] ~= '' then mark = ARGV[2] .. string.format('%0${LEASE_DIGITS}d', results[3 * i + 1]) end
    store(KEYS[i], charged, period, limit, mark)
  end
end
return results`;

/** Gives back what a take whose answer was lost charged, when its mark (ARGV[2]) is still found on any one
 * of its counters: the call's own units (ARGV, per counter) on every counter, and on each counter still
 * marked the lease the mark says it was granted there. The take charged all its counters or none, so one
 * mark found says it ran, and every counter's units go back, a counter written since by another call
 * included; only the lease of a counter whose mark a later write dropped stays charged. The counters are
 * written again without the mark: once. */
const GIVE_BACK_UNANSWERED = `${PRELUDE}
local found = false
local leases = {}
for i = 1, #KEYS do
  local stored = redis.call('GET', KEYS[i])
  leases[i] = 0
  if stored then
    local _, _, mark = parts_of(stored)
    if #mark == ${MARK_DIGITS + LEASE_DIGITS} and string.sub(mark, 1, ${MARK_DIGITS}) == ARGV[2] then
      found = true
      leases[i] = tonumber(string.sub(mark, ${MARK_DIGITS + 1}))
    end
  end
end
if not found then return 0 end
for i = 1, #KEYS do
  local base = 2 + (i - 1) * 3
  local period, limit = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2])
  store(KEYS[i], level_of(KEYS[i], period, limit) + tonumber(ARGV[base + 3]) - leases[i], period, limit)
end
return 1`;

const ADJUST = `${PRELUDE}
for i = 1, #KEYS do
  local base = 1 + (i - 1) * 3
  local period, limit = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2])
  store(KEYS[i], level_of(KEYS[i], period, limit) + tonumber(ARGV[base + 3]), period, limit)
end
return 1`;

/** A take's answer with what the script saw and granted, for a node that keeps leases. */
export interface LeasingTakeResult extends RateTakeResult {
  /** Per take, the counter as the script read it, before this call's charge. */
  meters: Meter[];
  /** Per take, the units of lease charged beyond its cost (0 when refused or none asked). */
  leased: number[];
}

export class RedisRateCounter implements RateCounter {
  readonly kind = 'redis' as const;

  constructor(private readonly state: ScriptingState) {}

  /** `charge`: names the charge, so that `giveBackUnanswered` can find whether Redis ran it when its answer
   * is lost. `leases[i]`: the units of lease take `i` asks for (none when absent). */
  async take(
    takes: readonly RateTake[],
    now?: number,
    charge?: string,
    leases?: readonly number[],
  ): Promise<LeasingTakeResult> {
    const args: Array<string | number> = [
      now === undefined ? '' : String(now),
      charge === undefined ? '' : markOf(charge),
    ];
    takes.forEach((take, i) => {
      args.push(take.periodMs, take.limit, take.need, take.cost, leases?.[i] ?? 0);
    });
    const keys = takes.map((take) => take.key);
    // A take is a check its caller waits for only so long: not connected, it fails at once (the caller's
    // fail mode applies), rather than be queued and charge, once Redis is back, a call long since decided.
    const reply = (await this.state.runScript(
      { name: 'gatewayRateTake', lua: TAKE, whenConnected: true },
      keys,
      args,
    )) as Array<string | number>;
    // The script decided; its readings (room left, reset, retry) are worked out here from the levels it read.
    const at = Number(reply[0]);
    const refused: number[] = [];
    const meters: Meter[] = [];
    const leased: number[] = [];
    takes.forEach((_, i) => {
      if (Number(reply[3 * i + 2]) === 0) refused.push(i);
      meters.push({ level: Number(reply[3 * i + 1]), at });
      leased.push(Number(reply[3 * i + 3]));
    });
    const admitted = refused.length === 0;
    // Refused, nothing was charged: the counters that had room read as they stand.
    const readings = takes.map((take, i) =>
      admitted || refused.includes(i)
        ? meterTake(meters[i], at, take).reading
        : meterReading(meters[i], at, take),
    );
    return { admitted, readings, refused, meters, leased };
  }

  async adjust(adjusts: Parameters<RateCounter['adjust']>[0], now?: number): Promise<void> {
    if (adjusts.length === 0) return;
    const args: Array<string | number> = [now === undefined ? '' : String(now)];
    for (const adjust of adjusts) args.push(adjust.periodMs, adjust.limit, adjust.units);
    // Not queued either: a settlement or a give-back its caller gave up on (and reported as not made) would
    // move the counter once Redis is back, the units it corrects long drained or charged again meanwhile.
    await this.state.runScript(
      { name: 'gatewayRateAdjust', lua: ADJUST, whenConnected: true },
      adjusts.map((adjust) => adjust.key),
      args,
    );
  }

  /**
   * A take named `charge` whose answer never came (its connection lost, or timed out; not one Redis answered
   * with an error, which may have stopped partway: answerLost in types.ts): if Redis ran it, and its mark
   * is still on any one of its counters, `adjusts` (the call's own units, negative, in the take's order) go
   * back on every counter, and the lease units it granted on each counter still marked (a counter another
   * call wrote since keeps its lease charged); if it did not run, or no counter carries the mark any more,
   * nothing. Queued until the connection is ready, unlike a take: the mark makes it right whenever it
   * runs. On the same connection as the take, it runs after the take. On one made after the take's was
   * lost, that order is not assured: the take's bytes, still in the send buffer of the destroyed socket,
   * may reach Redis after it. Then it finds no mark and gives back nothing, and the take's charge stands
   * until drained: the safe way to fail, never a give-back of what was not charged.
   */
  async giveBackUnanswered(charge: string, adjusts: readonly RateAdjust[], now?: number): Promise<boolean> {
    const args: Array<string | number> = [now === undefined ? '' : String(now), markOf(charge)];
    for (const adjust of adjusts) args.push(adjust.periodMs, adjust.limit, adjust.units);
    const ran = await this.state.runScript(
      { name: 'gatewayRateGiveBackUnanswered', lua: GIVE_BACK_UNANSWERED },
      adjusts.map((adjust) => adjust.key),
      args,
    );
    return ran === 1;
  }

  async close(): Promise<void> {}
}
