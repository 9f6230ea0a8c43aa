/**
 * A relayed answer the client left before: the provider's stream under the steps' generators is destroyed
 * and their `finally` blocks run (the rate-limit step settles its reservation there), though none of the
 * generators had started.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { discardBody } from '../../src/gateway/passthrough/discard-body.js';

/** A provider answer that keeps coming: a chunk every 10 ms, never the end. */
function endlessAnswer(): Readable {
  let sent = 0;
  return new Readable({
    read() {
      setTimeout(() => this.push(Buffer.from(`chunk ${sent++}`)), 10);
    },
  });
}

async function* settleAfter(body: AsyncIterable<Uint8Array>, settled: { done: boolean }) {
  try {
    yield* body;
  } finally {
    settled.done = true;
  }
}

async function* tap(body: AsyncIterable<Uint8Array>) {
  for await (const chunk of body) yield chunk;
}

describe('discardBody', () => {
  it('destroys the provider stream under unstarted generators, and runs their finally blocks', async () => {
    const provider = endlessAnswer();
    const settled = { done: false };
    discardBody(tap(settleAfter(provider, settled)));
    await expect.poll(() => provider.destroyed, { timeout: 2000 }).toBe(true);
    expect(settled.done).toBe(true);
  });

  it('is quiet when the provider stream fails', async () => {
    const provider = new Readable({
      read() {
        this.destroy(new Error('connection reset'));
      },
    });
    const settled = { done: false };
    discardBody(tap(settleAfter(provider, settled)));
    await expect.poll(() => settled.done, { timeout: 2000 }).toBe(true);
  });

  it('the stream made from the outermost generator and destroyed leaves the provider stream open', async () => {
    // Why discardBody exists: this is what the pass-through did, and the provider's answer was never read.
    const provider = endlessAnswer();
    const settled = { done: false };
    Readable.from(tap(settleAfter(provider, settled))).destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(provider.destroyed).toBe(false);
    expect(settled.done).toBe(false);
    provider.destroy();
  });
});
