/**
 * The calls of one fanned-out request (`n`, embedding inputs), run a few at a time: each call holds its own
 * copy of the request it sends, and a request fanned out into hundreds of calls is not hundreds of sockets
 * and copies at once. The next call starts as one finishes; after a call that `stops`, no more start. The
 * outcomes are in request order, of the calls made.
 */
import { performance } from 'node:perf_hooks';
import type { AttemptInput } from './attempt.js';

export async function runCallsAtOnce<Request, Outcome>(
  requests: readonly Request[],
  atOnce: number,
  call: (request: Request, index: number) => Promise<Outcome>,
  stops: (outcome: Outcome) => boolean,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let next = 0;
  let stopped = false;

  async function worker(): Promise<void> {
    while (next < requests.length && !stopped) {
      const index = next++;
      const outcome = await call(requests[index], index);
      outcomes[index] = outcome;
      if (stops(outcome)) stopped = true;
    }
  }

  await Promise.all(Array.from({ length: Math.min(atOnce, requests.length) }, () => worker()));
  // Calls start in order and every started one ends: the outcomes are those of the first calls, none missing.
  return outcomes;
}

/**
 * The deadlines of a call starting now, perhaps after others ended: like the first calls (attempt-step.ts),
 * bounded by the request's deadline until the client holds part of the answer, then by its own alone. A
 * request run in rounds of calls ends by its deadline, not one request_timeout a round.
 */
export function deadlinesOfACallStartingNow(
  input: AttemptInput,
): Pick<AttemptInput, 'timeoutMs' | 'firstChunkBy'> {
  const { firstChunkBy, timeoutMs } = input;
  if (firstChunkBy === undefined) return { timeoutMs, firstChunkBy };
  if ((input.sink?.written ?? 0) > 0) return { timeoutMs, firstChunkBy: undefined };
  return { timeoutMs: Math.max(1, Math.min(timeoutMs, firstChunkBy - performance.now())), firstChunkBy };
}
