/**
 * Rate counters in Redis, shared by every gateway node: each `take` and `adjust` is one Lua script, so
 * the check and the charge of every counter a call meets happen as one step that no other node's call
 * can interleave with. Time is Redis's own clock (`TIME`), one clock for every node, unless the caller
 * hands in `now` (tests inject time). TATs are kept as milliseconds with three decimals.
 */
import { gcraReading, type RateCounter, type RateTakeResult } from './rate-counter.js';
import type { ScriptingState } from './types.js';

const CLOCK = `
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end`;

const TAKE = `${CLOCK}
local results = {string.format('%.3f', now)}
local nexts = {}
local admitted = true
for i = 1, #KEYS do
  local base = 1 + (i - 1) * 4
  local period = tonumber(ARGV[base + 1])
  local interval = period / tonumber(ARGV[base + 2])
  local need = tonumber(ARGV[base + 3])
  local cost = tonumber(ARGV[base + 4])
  local tat = tonumber(redis.call('GET', KEYS[i]))
  if not tat or tat < now then tat = now end
  if tat + need * interval - now > period then admitted = false end
  nexts[i] = tat + cost * interval
  results[i + 1] = string.format('%.3f', tat)
end
if admitted then
  for i = 1, #KEYS do
    redis.call('SET', KEYS[i], string.format('%.3f', nexts[i]), 'PX', math.max(1, math.ceil(nexts[i] - now)))
  end
end
return results`;

const ADJUST = `${CLOCK}
for i = 1, #KEYS do
  local base = 1 + (i - 1) * 3
  local interval = tonumber(ARGV[base + 1]) / tonumber(ARGV[base + 2])
  local tat = tonumber(redis.call('GET', KEYS[i]))
  if not tat or tat < now then tat = now end
  local next = tat + tonumber(ARGV[base + 3]) * interval
  if next > now then
    redis.call('SET', KEYS[i], string.format('%.3f', next), 'PX', math.max(1, math.ceil(next - now)))
  else
    redis.call('DEL', KEYS[i])
  end
end
return 1`;

export class RedisRateCounter implements RateCounter {
  readonly kind = 'redis' as const;

  constructor(private readonly state: ScriptingState) {}

  async take(takes: Parameters<RateCounter['take']>[0], now?: number): Promise<RateTakeResult> {
    const args: Array<string | number> = [now === undefined ? '' : String(now)];
    for (const take of takes) args.push(take.periodMs, take.limit, take.need, take.cost);
    const reply = (await this.state.runScript(
      { name: 'gatewayRateTake', lua: TAKE },
      takes.map((take) => take.key),
      args,
    )) as string[];
    // The script read every counter before it charged any: the same decision, read back here.
    const at = Number(reply[0]);
    const decisions = takes.map((take, i) => gcraReading(Number(reply[i + 1]), at, take));
    const refused: number[] = [];
    decisions.forEach((decision, i) => {
      if (!decision.admitted) refused.push(i);
    });
    return { admitted: refused.length === 0, readings: decisions.map((d) => d.reading), refused };
  }

  async adjust(adjusts: Parameters<RateCounter['adjust']>[0], now?: number): Promise<void> {
    if (adjusts.length === 0) return;
    const args: Array<string | number> = [now === undefined ? '' : String(now)];
    for (const adjust of adjusts) args.push(adjust.periodMs, adjust.limit, adjust.units);
    await this.state.runScript(
      { name: 'gatewayRateAdjust', lua: ADJUST },
      adjusts.map((adjust) => adjust.key),
      args,
    );
  }
}
