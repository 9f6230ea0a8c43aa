/**
 * Streams are relayed as they come: chunks reach the client while the upstream is still writing, usage
 * reaches the client only when it asked for it, the stream ends with [DONE], every chunk is a valid
 * CreateChatCompletionStreamResponse, and a client that hangs up ends the upstream call too.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import {
  CHAT_BODY,
  PROVIDER_KEY,
  providerHeaders,
  sleep,
  sseData,
  startObservedUpstream,
  uniqueId,
  waitForLogs,
  type ObservedUpstream,
} from './support.js';
import { readChatStream } from '../helpers/chat-stream.js';

let gateway: TestGateway;
let fake: FakeUpstream;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'stream' });
  gateway = await startGateway();
  client = new OpenAI({
    baseURL: gateway.url,
    apiKey: PROVIDER_KEY,
    maxRetries: 0,
    defaultHeaders: {
      'x-gateway-api-key': gateway.adminKey,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': fake.url,
    },
  });
});
afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

const GAP_MS = 300;

describe('no buffering', () => {
  it('the first chunks arrive long before the upstream finishes', async () => {
    fake.enqueue({ chunks: 5, chunkDelayMs: GAP_MS });
    const stream = await client.chat.completions.create({
      ...CHAT_BODY,
      messages: [{ role: 'user', content: 'one two three four five' }],
      stream: true,
    } as OpenAI.Chat.ChatCompletionCreateParamsStreaming);
    const arrivals: number[] = [];
    let text = '';
    for await (const chunk of stream) {
      arrivals.push(Date.now());
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    expect(text).toBe('[stream] one two three four five');
    const sentFirstAt = fake.requests.at(-1)!.receivedAt;
    // role chunk + 5 content chunks + finish chunk, one every GAP_MS from the moment the request arrived
    expect(arrivals.length).toBeGreaterThanOrEqual(7);
    const upstreamDuration = (arrivals.length - 1) * GAP_MS;
    // The upstream wrote its first event as the request arrived: it must reach the client within a gap,
    // not when the upstream ends ~1.8 s later.
    expect(arrivals[0] - sentFirstAt).toBeLessThan(GAP_MS);
    expect(arrivals[1] - sentFirstAt).toBeLessThan(2 * GAP_MS + 150);
    expect(arrivals.at(-1)! - arrivals[0]).toBeGreaterThan(upstreamDuration * 0.7);
    // Chunks are spread out like the upstream's, not delivered in one burst.
    const gaps = arrivals.slice(1).map((at, i) => at - arrivals[i]);
    expect(gaps.filter((gap) => gap > GAP_MS / 2).length).toBeGreaterThanOrEqual(4);
  });
});

describe('stream_options.include_usage', () => {
  async function collect(includeUsage: boolean | undefined) {
    const stream = await client.chat.completions.create({
      ...CHAT_BODY,
      stream: true,
      ...(includeUsage === undefined ? {} : { stream_options: { include_usage: includeUsage } }),
    } as OpenAI.Chat.ChatCompletionCreateParamsStreaming);
    const { chunks } = await readChatStream(stream);
    return chunks;
  }

  it('asked for: a final usage chunk with no choices, and valid chunks throughout', async () => {
    const chunks = await collect(true);
    const withUsage = chunks.filter((chunk) => chunk.usage);
    expect(withUsage).toHaveLength(1);
    expect(chunks.at(-1)).toBe(withUsage[0]);
    expect(withUsage[0].choices).toEqual([]);
    expect(withUsage[0].usage).toMatchObject({
      prompt_tokens: expect.any(Number),
      completion_tokens: expect.any(Number),
      total_tokens: expect.any(Number),
    });
    expect(withUsage[0].usage!.total_tokens).toBe(
      withUsage[0].usage!.prompt_tokens + withUsage[0].usage!.completion_tokens,
    );
  });

  it.each([undefined, false])('not asked for (%s): no usage reaches the client', async (includeUsage) => {
    const chunks = await collect(includeUsage);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.filter((chunk) => chunk.usage)).toEqual([]);
    expect(chunks.filter((chunk) => chunk.choices.length === 0)).toEqual([]);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe('[stream] hello');
  });
});

describe('wire format', () => {
  it('a raw chat stream is text/event-stream, every event a valid chunk, ending with [DONE]', async () => {
    const response = await fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      headers: providerHeaders(gateway, fake, { 'content-type': 'application/json' }),
      body: JSON.stringify({ ...CHAT_BODY, stream: true, stream_options: { include_usage: true }, n: 2 }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = sseData(await response.text());
    expect(events.at(-1)).toBe('[DONE]');
    expect(events.filter((data) => data === '[DONE]')).toHaveLength(1);
    const chunks = events.slice(0, -1).map((data) => JSON.parse(data) as OpenAI.Chat.ChatCompletionChunk);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
    const indexes = new Set(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.index)));
    expect([...indexes].sort()).toEqual([0, 1]);
    expect(chunks.at(-1)!.usage).toBeTruthy();
  });

  it('a raw text completion stream ends with [DONE]', async () => {
    const response = await fetch(`${gateway.url}/completions`, {
      method: 'POST',
      headers: providerHeaders(gateway, fake, { 'content-type': 'application/json' }),
      body: JSON.stringify({ model: 'gpt-3.5-turbo-instruct', prompt: 'say', stream: true }),
    });
    expect(response.status).toBe(200);
    const events = sseData(await response.text());
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((data) => JSON.parse(data) as OpenAI.Completions.Completion);
    expect(chunks.length).toBeGreaterThan(0);
    for (const chunk of chunks) expect(chunk.object).toBe('text_completion');
    expect(chunks.map((chunk) => chunk.choices[0]?.text ?? '').join('')).toContain('[stream]');
  });

  it('an upstream cut mid-stream ends without [DONE] (never presented as complete)', async () => {
    fake.enqueue({ chunks: 10, cutAfter: 4 });
    const response = await fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      headers: providerHeaders(gateway, fake, { 'content-type': 'application/json' }),
      body: JSON.stringify({ ...CHAT_BODY, stream: true }),
    });
    expect(response.status).toBe(200);
    const events = sseData(await response.text());
    expect(events).not.toContain('[DONE]');
    const last = JSON.parse(events.at(-1)!) as { error?: { message: string } };
    expect(last.error?.message).toBeTruthy();
  });
});

describe('client disconnect', () => {
  let observed: ObservedUpstream;
  beforeAll(async () => {
    observed = await startObservedUpstream(60, 100);
  });
  afterAll(async () => {
    await observed?.close();
  });

  it('aborts the upstream call within a second, and the call is recorded as 499', async () => {
    const traceId = uniqueId('disconnect');
    const controller = new AbortController();
    const response = await fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      headers: providerHeaders(gateway, observed.url, {
        'content-type': 'application/json',
        'x-gateway-trace-id': traceId,
      }),
      body: JSON.stringify({ ...CHAT_BODY, stream: true }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let received = '';
    for (let i = 0; i < 20 && !received.includes('w2 '); i++) {
      const { value, done } = await reader.read();
      if (done) break;
      received += new TextDecoder().decode(value);
    }
    expect(received).toContain('w0 ');
    const index = observed.closedAt.length - 1;
    expect(observed.closedAt[index]).toBeUndefined();

    controller.abort();
    const abortedAt = Date.now();
    for (let i = 0; i < 40 && observed.closedAt[index] === undefined; i++) await sleep(50);
    const closedAt = observed.closedAt[index];
    expect(closedAt, 'the upstream connection was never closed').toBeDefined();
    expect(closedAt! - abortedAt).toBeLessThan(1000);
    expect(observed.written[index]).toBeLessThan(30);

    const [record] = await waitForLogs(gateway, { trace_id: traceId });
    expect(record).toMatchObject({ status: 499, stream: true, endpoint: 'chat', is_attempt: false });
  });
});
