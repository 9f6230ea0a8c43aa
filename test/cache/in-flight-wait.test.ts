/**
 * A request waiting for an identical one's answer (cache/in-flight.ts) waits no longer than it would have
 * waited for the provider itself: its own client leaving, or its own request's deadline passing, ends the
 * wait with the failure a call of its own would have had, however long the leader's call still takes.
 */
import { describe, expect, it } from 'vitest';
import { CallAbort } from '../../src/core/abort.js';
import { InFlightAnswers } from '../../src/gateway/cache/in-flight.js';
import { flightTurn, type FlightTurn } from '../../src/gateway/steps/cache-step.js';
import type { TargetCall } from '../../src/gateway/steps/target-step.js';

function follower(flights: InFlightAnswers, signal: CallAbort, msLeft: number): TargetCall {
  return {
    sink: undefined,
    run: {
      deadline: performance.now() + msLeft,
      deps: { routing: { cacheFlights: flights } },
      call: { ctx: { signal, cacheForceRefresh: false } },
    },
  } as unknown as TargetCall;
}

/** The turn, or 'still waiting' when it has not come within `ms`. */
function within(turn: Promise<FlightTurn>, ms: number): Promise<FlightTurn | 'still waiting'> {
  return Promise.race([turn, new Promise<'still waiting'>((done) => setTimeout(done, ms, 'still waiting'))]);
}

describe('a request waiting for an identical one in flight', () => {
  it('stops waiting when its own client goes away, answered as a client gone', async () => {
    const flights = new InFlightAnswers();
    const leader = flights.start('key');
    const signal = new CallAbort();
    const turn = flightTurn(follower(flights, signal, 60_000), 'key', 60_000);
    setTimeout(() => signal.abort(), 20);
    const waited = await within(turn, 1_000);
    expect(waited).toMatchObject({
      kind: 'stopped',
      outcome: { ok: false, status: 408, reason: 'client_gone' },
    });
    leader.land(undefined);
  });

  it('stops waiting when its own request deadline passes, answered with a timeout', async () => {
    const flights = new InFlightAnswers();
    const leader = flights.start('key');
    const started = performance.now();
    const waited = await within(flightTurn(follower(flights, new CallAbort(), 50), 'key', 60_000), 1_000);
    expect(waited).toMatchObject({ kind: 'stopped', outcome: { ok: false, status: 408, reason: 'timeout' } });
    expect(performance.now() - started).toBeLessThan(500);
    leader.land(undefined);
  });

  it('a client already gone does not wait at all', async () => {
    const flights = new InFlightAnswers();
    const leader = flights.start('key');
    const signal = new CallAbort();
    signal.abort();
    const waited = await within(flightTurn(follower(flights, signal, 60_000), 'key', 60_000), 200);
    expect(waited).toMatchObject({ kind: 'stopped', outcome: { reason: 'client_gone' } });
    leader.land(undefined);
  });

  it('still takes the leader answer when it lands in time, and leaves no timer or listener behind', async () => {
    const flights = new InFlightAnswers();
    const leader = flights.start('key');
    const signal = new CallAbort();
    const turn = flightTurn(follower(flights, signal, 60_000), 'key', 60_000);
    leader.land({ kind: 'json', body: { id: 'chatcmpl-1' }, storedAt: Date.now() });
    expect(await within(turn, 1_000)).toMatchObject({
      kind: 'landed',
      landed: { answer: { body: { id: 'chatcmpl-1' } } },
    });
    // Aborting afterwards changes nothing of the answer given.
    signal.abort();
    leader.end();
  });
});
