/**
 * The breaker step over the real breaker in memory, on a clock the test moves: which calls' outcomes
 * decide a circuit that is open or half-open.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/core/errors.js';
import type { AttemptOutcome } from '../../src/gateway/attempt.js';
import { gatewayFailure } from '../../src/gateway/attempt.js';
import { failOpenBreaker } from '../../src/gateway/routing/fail-open-breaker.js';
import { breakerStep } from '../../src/gateway/steps/breaker-step.js';
import type { TargetCall } from '../../src/gateway/steps/target-step.js';
import { createBreaker } from '../../src/state/breaker.js';
import { MemoryState } from '../../src/state/memory-state.js';

const COOLDOWN = 30_000;
const cb = { failure_threshold: 2, cooldown_interval: COOLDOWN };

const success = { ok: true, status: 200 } as unknown as AttemptOutcome;
const outage = () =>
  gatewayFailure(new ProviderError({ status: 503, message: 'down', provider: 'openai' }), 'status');

/** A gateway's breaker step over one target, whose calls the test answers when it wants. */
function harness() {
  let now = 1_000_000;
  const state = new MemoryState({ now: () => now });
  const breaker = failOpenBreaker(createBreaker(state), pino({ level: 'silent' }));
  const pending: Array<(outcome: AttemptOutcome) => void> = [];
  const step = breakerStep(() => new Promise<AttemptOutcome>((resolve) => pending.push(resolve)));
  const run = {
    deps: { routing: { breaker } },
    call: { ctx: { apiKey: { workspace_id: 'ws' }, targetPrompts: undefined }, state: { cacheStatus: null } },
    attempts: [],
  };
  const call = {
    run,
    path: '',
    node: { cb_config: cb },
    resolved: { adapter: { id: 'openai' }, target: {} },
    address: 'http://upstream/v1',
    model: 'm',
    body: {},
    retry: 0,
  } as unknown as TargetCall;

  /** Starts a call; resolves with the outcome once the step has ended. `sent` says whether it reached the
   * target (else the step answered circuit_open at once). */
  async function start(): Promise<{ sent: boolean; answer: (o: AttemptOutcome) => Promise<AttemptOutcome> }> {
    const before = pending.length;
    const result = step(call);
    // Let the step ask the breaker and, when it may, call the target.
    for (let i = 0; i < 20 && pending.length === before; i++) await new Promise((r) => setImmediate(r));
    if (pending.length === before) {
      const outcome = await result;
      expect(outcome).toMatchObject({ ok: false, reason: 'circuit_open' });
      return { sent: false, answer: async () => outcome };
    }
    const resolve = pending[pending.length - 1];
    return {
      sent: true,
      answer: async (o) => {
        resolve(o);
        return result;
      },
    };
  }

  return {
    start,
    advance: (ms: number) => {
      now += ms;
    },
    close: () => state.close(),
  };
}

describe('the breaker step: who decides a tripped circuit', () => {
  it('a call sent before the circuit opened and succeeding once it is half-open does not close it', async () => {
    const h = harness();
    const early = await h.start();
    expect(early.sent).toBe(true);
    for (let i = 0; i < cb.failure_threshold; i++) await (await h.start()).answer(outage());
    expect((await h.start()).sent).toBe(false);

    h.advance(COOLDOWN + 1);
    const probe = await h.start();
    expect(probe.sent).toBe(true);
    // The long call sent while the circuit was closed ends well; the target is still failing.
    await early.answer(success);
    expect((await h.start()).sent).toBe(false);

    // The probe alone decides: it fails, and the circuit opens for another cooldown.
    await probe.answer(outage());
    h.advance(COOLDOWN / 2);
    expect((await h.start()).sent).toBe(false);
    await h.close();
  });

  it('a call sent before the circuit opened and failing once it is half-open does not reopen it', async () => {
    const h = harness();
    const early = await h.start();
    for (let i = 0; i < cb.failure_threshold; i++) await (await h.start()).answer(outage());
    h.advance(COOLDOWN + 1);
    const probe = await h.start();
    expect(probe.sent).toBe(true);
    await early.answer(outage());
    await probe.answer(success);
    expect((await h.start()).sent).toBe(true);
    await h.close();
  });

  it('the probe admitted when half-open closes the circuit; old failures then count for nothing', async () => {
    const h = harness();
    const early = await h.start();
    for (let i = 0; i < cb.failure_threshold; i++) await (await h.start()).answer(outage());
    h.advance(COOLDOWN + 1);
    const probe = await h.start();
    await probe.answer(success);
    // A failure of a call sent before the circuit opened is no failure of the circuit closed since.
    await early.answer(outage());
    const next = await h.start();
    expect(next.sent).toBe(true);
    await next.answer(outage());
    expect((await h.start()).sent).toBe(true);
    await h.close();
  });
});
