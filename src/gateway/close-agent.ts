/**
 * Closes an undici Agent within a time. Until then the calls under way may end on their own (and new ones
 * still go out: a call's own retries, its async hooks); once none is left, or at the deadline, the
 * connections are destroyed, and every call still running fails with `reason` through its own error path
 * (a provider call as the provider unreachable, a hook check as erred). A call the stop does not abort
 * otherwise (an async hook's webhook or judge, a provider resource call made with no caller's signal)
 * would hold a graceful close, and so the stop, until its own timeout, which may be minutes.
 *
 * `Agent.close()` is no first step here: it forgets its connection pools at once, so that a `destroy()`
 * after it finds none to destroy and the calls it waits for run on.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { Agent } from 'undici';

/** How often the calls under way are counted while the close waits for them. */
const POLL_MS = 25;

/** `beforeDestroy` runs just before the connections are destroyed, so that what their calls' failures set
 * off (a retry, say) can tell that no call goes out any more. */
export async function closeWithin(
  agent: Agent,
  timeoutMs: number,
  reason: Error,
  beforeDestroy?: () => void,
): Promise<void> {
  if (timeoutMs === Infinity) return agent.close();
  const deadline = performance.now() + timeoutMs;
  for (let left = timeoutMs; busy(agent) && left > 0; left = deadline - performance.now()) {
    await sleep(Math.min(POLL_MS, left));
  }
  beforeDestroy?.();
  await agent.destroy(reason);
}

function busy(agent: Agent): boolean {
  for (const stats of Object.values(agent.stats)) if (stats.size > 0) return true;
  return false;
}
