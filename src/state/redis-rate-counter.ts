/**
 * Rate counters in Redis, shared by every gateway node: each `take` and `adjust` is one Lua script, so
 * the check and the charge of every counter a call meets happen as one step that no other node's call
 * can interleave with. Time is Redis's own clock (`TIME`), one clock for every node, unless the caller
 * hands in `now` (tests inject time). A counter is the string `<level>,<at ms>`, expiring once drained.
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

/** `now`, and the level of a key at `now` (the twin of rate-counter.ts `levelAt`). */
const PRELUDE = `
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local function level_of(key, period, limit)
  local stored = redis.call('GET', key)
  if not stored then return 0 end
  local level, at = string.match(stored, '^([^,]+),(.+)$')
  local drained = math.max(0, now - tonumber(at)) * limit / period
  return math.max(0, tonumber(level) - drained)
end
local function store(key, level, period, limit)
  if level <= 0 then
    redis.call('DEL', key)
  else
    -- At most MAX_TTL_MS, written as digits: Redis refuses a lifetime past its range, and one written as
    -- Lua writes a large number (1e+17).
    local ttl = math.min(math.max(1, math.ceil(level * period / limit)), ${MAX_TTL_MS})
    redis.call('SET', key, string.format('%.9f,%.3f', level, now), 'PX', string.format('%.0f', ttl))
  end
end`;

/** Reads every counter, then charges them all only if each had room, each with the lease it asked for as
 * far as it fits below half the limit. Answers `now`, then for each counter the level it read, whether it
 * had room (1) or not (0), and the units of lease it was granted. */
const TAKE = `${PRELUDE}
local results = {string.format('%.3f', now)}
local levels = {}
local admitted = true
for i = 1, #KEYS do
  local base = 1 + (i - 1) * 5
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
  for i = 1, #KEYS do
    local base = 1 + (i - 1) * 5
    local period, limit = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2])
    local charged = levels[i] + tonumber(ARGV[base + 4])
    local lease = math.min(tonumber(ARGV[base + 5]), math.floor(limit / 2 - charged + 1e-9))
    if lease > 0 then
      charged = charged + lease
      results[3 * i + 1] = lease
    end
    store(KEYS[i], charged, period, limit)
  end
end
return results`;

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

  /** `leases[i]`: the units of lease take `i` asks for (none when absent). */
  async take(
    takes: readonly RateTake[],
    now?: number,
    leases?: readonly number[],
  ): Promise<LeasingTakeResult> {
    const args: Array<string | number> = [now === undefined ? '' : String(now)];
    takes.forEach((take, i) => {
      args.push(take.periodMs, take.limit, take.need, take.cost, leases?.[i] ?? 0);
    });
    // A take is a check its caller waits for only so long: not connected, it fails at once (the caller's
    // fail mode applies), rather than be queued and charge, once Redis is back, a call long since decided.
    const reply = (await this.state.runScript(
      { name: 'gatewayRateTake', lua: TAKE, whenConnected: true },
      takes.map((take) => take.key),
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

  async close(): Promise<void> {}
}
