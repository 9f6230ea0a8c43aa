import { describe, expect, it } from 'vitest';
import { deadlineStep } from '../../src/gateway/steps/deadline-step.js';
import type { TargetCall } from '../../src/gateway/steps/target-step.js';

const callWithLeft = (ms: number) =>
  ({ run: { deadline: performance.now() + ms, call: { sink: undefined } } }) as unknown as TargetCall;

describe('the deadline step', () => {
  it('starts no call in less than a millisecond left, what a timer may leave before the deadline', async () => {
    let called = 0;
    const step = deadlineStep(() => {
      called += 1;
      return Promise.resolve({ ok: true } as never);
    });
    const outcome = await step(callWithLeft(0.5));
    expect(called).toBe(0);
    expect(outcome).toMatchObject({ ok: false, reason: 'timeout' });
    await step(callWithLeft(50));
    expect(called).toBe(1);
  });
});
