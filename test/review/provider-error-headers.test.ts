/**
 * docs/api.md: "The provider's rate-limit headers (`x-ratelimit-*`), `retry-after` and `x-request-id` are
 * passed on" — on a provider's error as on its answer, since a 429 is when a client needs them most, and
 * on a stream as on a whole answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faults, startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { target } from '../routing/support.js';

let gateway: TestGateway;
let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeOpenAI({ name: 'limited' });
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

/** A chat completion through the gateway to the fake, with `extra` in its body. */
const chat = (extra: Record<string, unknown>) =>
  postWithConfig(gateway, '/chat/completions', target(upstream), {
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'hi' }],
    ...extra,
  });

describe('a provider error', () => {
  it('carries the provider rate-limit headers and request id', async () => {
    upstream.enqueue(faults.rateLimited(3));
    const response = await chat({});
    expect(response.status).toBe(429);
    expect(response.headers.get('x-gateway-error-source')).toBe('provider');
    expect(response.headers.get('retry-after')).toBe('3');
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('10000');
    expect(response.headers.get('x-request-id')).toMatch(/.+/);
    await response.text();
  });
});

describe('a streamed answer', () => {
  it('carries the provider rate-limit headers and request id with its head', async () => {
    const response = await chat({ stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('10000');
    expect(response.headers.get('x-request-id')).toMatch(/.+/);
    expect(await response.text()).toContain('data: [DONE]');
  });
});
