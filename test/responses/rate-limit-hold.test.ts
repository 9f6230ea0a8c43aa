import { describe, expect, it } from 'vitest';
import { GatewayError, ProviderError } from '../../src/core/errors.js';
import { RateLimitHold } from '../../src/gateway/responses/rate-limit-hold.js';
import { BufferSink } from '../../src/gateway/sink.js';

const refusal = (retryAfter: string) =>
  new GatewayError('rate_limit_exceeded', 'over the limit', { headers: { 'retry-after': retryAfter } });

describe("a background response's hold on rate-limit refusals", () => {
  it("holds a refusal made before any of the answer, for the policy's Retry-After", () => {
    const next = new BufferSink();
    const hold = new RateLimitHold(next, Date.now() + 60_000);
    expect(hold.heldBack).toBe(false);
    hold.fail(refusal('7'), 429);
    expect(hold.waitMs).toBe(7_000);
    // Held back from the log as well: the run that answers the response leaves its record.
    expect(hold.heldBack).toBe(true);
    let told = false;
    void next.result.then(() => (told = true));
    return Promise.resolve().then(() => expect(told).toBe(false));
  });

  it('waits a second when the limits could not be checked (fail mode closed)', () => {
    const hold = new RateLimitHold(new BufferSink(), Date.now() + 60_000);
    hold.fail(new GatewayError('rate_limit_unavailable', 'unreachable'), 503);
    expect(hold.waitMs).toBe(1_000);
  });

  it("passes on a refusal whose wait would end past the response's window, and any other failure", async () => {
    const late = new BufferSink();
    const hold = new RateLimitHold(late, Date.now() + 5_000);
    hold.fail(refusal('60'), 429);
    expect(hold.waitMs).toBeUndefined();
    expect(hold.heldBack).toBe(false);
    expect(await late.result).toMatchObject({ kind: 'error', status: 429 });

    const provider = new BufferSink();
    const fromProvider = new RateLimitHold(provider, Date.now() + 60_000);
    fromProvider.fail(new ProviderError({ status: 429, message: 'slow down', provider: 'openai' }), 429);
    expect(fromProvider.waitMs).toBeUndefined();
    expect(await provider.result).toMatchObject({ kind: 'error', status: 429 });
  });

  it('passes on a refusal that came after part of the answer', async () => {
    const next = new BufferSink();
    const hold = new RateLimitHold(next, Date.now() + 60_000);
    hold.chunk({ object: 'chat.completion.chunk' } as never, undefined);
    hold.fail(refusal('1'), 429);
    expect(hold.waitMs).toBeUndefined();
    expect(await next.result).toMatchObject({ kind: 'error' });
  });
});
