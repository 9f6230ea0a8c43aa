/**
 * A tokens policy and pass-through calls whose answers carry no usage: a body sent in chunks has no
 * `content-length` to reserve by, and an OpenAI stream the client asked for without
 * `stream_options.include_usage` gives no usage, so the call is settled to an estimate of the bytes
 * that went both ways (about four a token), not left at its reservation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { target } from '../routing/support.js';
import { client, ok } from '../management/http.js';

describe('pass-through calls without usage under a tokens policy', () => {
  let gateway: TestGateway;
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'pt-token-estimate' });
    gateway = await startGateway({ rateLimitClock: () => Date.UTC(2030, 0, 1) });
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const chunked = (bytes: Uint8Array) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(0, 100));
        controller.enqueue(bytes.subarray(100));
        controller.close();
      },
    });

  const passThrough = async (body: string, metadata: Record<string, string>) => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': gateway.adminKey,
        // The provider's base without its /v1: the pass-through path /v1/chat/completions is its chat.
        'x-gateway-config': JSON.stringify(target(fake, { custom_host: new URL(fake.url).origin })),
        'x-gateway-metadata': JSON.stringify(metadata),
      },
      // In chunks, without a content-length.
      body: chunked(new TextEncoder().encode(body)),
      duplex: 'half',
    } as RequestInit);
    const answer = new Uint8Array(await response.arrayBuffer());
    return { response, answerBytes: answer.byteLength };
  };

  /** A policy of 100,000 tokens a minute per API key, met by the calls whose metadata `case` is `name`. */
  const tokenPolicy = (name: string) =>
    ok(
      client(gateway.url, gateway.adminKey).post('/policies/rate-limits', {
        conditions: [{ key: 'metadata.case', value: name }],
        group_by: [{ key: 'api_key' }],
        type: 'tokens',
        unit: 'rpm',
        value: 100_000,
      }),
    );

  it('settles a chunked, streamed chat without usage to the bytes read and relayed', async () => {
    await tokenPolicy('pt-stream');
    const body = JSON.stringify({
      model: 'gpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: 'x'.repeat(2000) }],
    });
    const first = await passThrough(body, { case: 'pt-stream' });
    expect(first.response.status).toBe(200);
    expect(first.response.headers.get('content-type')).toContain('text/event-stream');
    // Nothing to reserve by but the least.
    expect(first.response.headers.get('x-ratelimit-remaining-tokens')).toBe(String(100_000 - 1));
    const second = await passThrough(body, { case: 'pt-stream' });
    const firstUsed = Math.ceil((body.length + first.answerBytes) / 4);
    // Less the second call's own reservation, unless the counter's entry holding the first one's lapsed
    // on the real clock before it was settled (a unit's room comes back in under a second at this limit).
    expect([100_000 - firstUsed - 1, 100_000 - firstUsed]).toContain(
      Number(second.response.headers.get('x-ratelimit-remaining-tokens')),
    );
    expect(firstUsed).toBeGreaterThan(body.length / 4);
  });

  it('still settles to the usage a stream gives', async () => {
    await tokenPolicy('pt-usage');
    const body = JSON.stringify({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'x'.repeat(2000) }],
    });
    await passThrough(body, { case: 'pt-usage' });
    const record = fake.requests.at(-1);
    expect(record?.path).toBe('/v1/chat/completions');
    const second = await passThrough(body, { case: 'pt-usage' });
    const remaining = Number(second.response.headers.get('x-ratelimit-remaining-tokens'));
    // The fake's usage counts the prompt's words, far below 2,000 characters' estimate.
    expect(100_000 - 1 - remaining).toBeLessThan(body.length / 4);
  });
});
