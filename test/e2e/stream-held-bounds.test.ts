/**
 * What the gateway holds of a streamed answer is bounded, however long the stream goes on: the text kept
 * for a continuation on another target stops at GATEWAY_STREAM_CONTINUATION_MAX_CHARS, the stream kept for
 * the cache at the largest entry the cache stores. A stream past them is still relayed whole; only, if it
 * breaks, it can no longer be continued and ends with the in-band error, and it is not cached.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream } from '../fakes/openai/server.js';
import { splitIntoPieces } from '../fakes/openai/request-text.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  logsOf,
  openAIFakesForFile,
  rawChatStream,
  target,
  traceHeaders,
  userMessage,
} from '../routing/support.js';

const CONTINUATION_MAX = 60;
/** The memory cache stores no entry above an eighth of its bound: 2000 bytes. */
const CACHE_MAX = 16_000;

let gateway: TestGateway;
const fake = openAIFakesForFile();

beforeAll(async () => {
  gateway = await startGateway({
    env: {
      GATEWAY_STREAM_CONTINUATION_MAX_CHARS: String(CONTINUATION_MAX),
      GATEWAY_CACHE_MAX_BYTES: String(CACHE_MAX),
    },
  });
});

afterAll(async () => {
  await gateway?.close();
});

const chat = { model: 'gpt-4o-mini', messages: userMessage('tell me a story') };

function fallbackConfig(primary: FakeUpstream, fallback: FakeUpstream) {
  return {
    strategy: { mode: 'fallback' },
    targets: [target(primary), target(fallback)],
  };
}

describe.concurrent('text kept for a continuation', () => {
  it('a stream cut within the bound is continued on the fallback', async () => {
    const primary = await fake('primary');
    const fallback = await fake('fallback');
    const pieces = splitIntoPieces('[primary] tell me a story', 60);
    // The first event is the role chunk: 6 events carry 5 pieces, under the bound.
    expect(pieces.slice(0, 5).join('').length).toBeLessThan(CONTINUATION_MAX);
    primary.enqueue({ chunks: 60, cutAfter: 6 });
    fallback.enqueue({ text: ' the rest' });
    const result = await rawChatStream(gateway, fallbackConfig(primary, fallback), chat);
    expect(result.done).toBe(true);
    expect(result.text).toBe(pieces.slice(0, 5).join('') + ' the rest');
    expect(fallback.requests).toHaveLength(1);
  });

  it('a stream cut past the bound is relayed to the cut, then ends with the in-band error, not continued', async () => {
    const primary = await fake('primary');
    const fallback = await fake('fallback');
    const pieces = splitIntoPieces('[primary] tell me a story', 60);
    const sent = pieces.slice(0, 39).join('');
    expect(sent.length).toBeGreaterThan(CONTINUATION_MAX);
    primary.enqueue({ chunks: 60, cutAfter: 40 });
    fallback.enqueue({ text: ' the rest' });
    const { traceId, headers } = traceHeaders();
    const result = await rawChatStream(gateway, fallbackConfig(primary, fallback), chat, headers);
    // Every chunk the provider sent went out; the bound holds what is kept, never the relay.
    expect(result.text).toBe(sent);
    expect(result.done).toBe(false);
    expect(result.events.at(-1)).toMatchObject({ error: { type: expect.any(String) } });
    expect(fallback.requests).toHaveLength(0);
    // The record keeps the text up to the bound.
    const records = await logsOf(gateway, traceId, 1);
    const call = records.find((r) => !r.is_attempt) as unknown as {
      response_body: { choices: Array<{ content: string }> };
    };
    const kept = call.response_body.choices[0].content;
    expect(kept.length).toBeLessThanOrEqual(CONTINUATION_MAX);
    expect(sent.startsWith(kept)).toBe(true);
  });
});

describe.concurrent('a stream kept for the cache', () => {
  const cached = (upstream: FakeUpstream) => target(upstream, { cache: { mode: 'simple', max_age: 60 } });
  const ask = (upstream: FakeUpstream, question: string) =>
    rawChatStream(gateway, cached(upstream), { ...chat, messages: userMessage(question) });

  it('is stored when it fits the cache', async () => {
    const upstream = await fake('short');
    upstream.enqueue({ chunks: 2 });
    const first = await ask(upstream, 'a short one');
    expect(first.done).toBe(true);
    const second = await ask(upstream, 'a short one');
    expect(second.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(second.text).toBe(first.text);
    expect(upstream.requests).toHaveLength(1);
  });

  it('is relayed whole but not stored once longer than the cache stores', async () => {
    const upstream = await fake('long');
    upstream.enqueue({ chunks: 60 });
    upstream.enqueue({ chunks: 60 });
    const first = await ask(upstream, 'a long one');
    expect(first.done).toBe(true);
    expect(first.events.length).toBeGreaterThan(60);
    expect(JSON.stringify(first.events).length).toBeGreaterThan(CACHE_MAX / 8);
    const second = await ask(upstream, 'a long one');
    expect(second.headers.get('x-gateway-cache-status')).toBe('MISS');
    expect(second.done).toBe(true);
    expect(upstream.requests).toHaveLength(2);
  });
});
