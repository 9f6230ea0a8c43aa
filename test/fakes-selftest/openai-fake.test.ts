import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import {
  fakeVector,
  faults,
  openAIErrors,
  startFakeOpenAI,
  type FakeUpstream,
} from '../fakes/openai/server.js';
import { readChatStream } from '../helpers/chat-stream.js';

let fake: FakeUpstream;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'alpha' });
  client = new OpenAI({ baseURL: fake.url, apiKey: 'sk-test', maxRetries: 0, timeout: 5_000 });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

/** The raw SSE body, to see what the SDK hides (`[DONE]`, malformed lines). */
async function rawStream(body: object): Promise<string> {
  const res = await fetch(`${fake.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body: JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi there' }],
      stream: true,
      ...body,
    }),
  });
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  return res.text();
}

const dataLines = (raw: string) =>
  raw
    .split('\n\n')
    .filter((f) => f.startsWith('data: '))
    .map((f) => f.slice(6));

describe('chat completions', () => {
  it('answers non-stream with the echo of the last user message, the model, usage details', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [{ type: 'text', text: 'Say hello' }] },
      ],
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(completion.choices[0].message.content).toBe('[alpha] Say hello');
    expect(completion.model).toBe('gpt-4o-mini');
    expect(completion.id).toMatch(/^chatcmpl-[0-9A-Za-z]{29}$/);
    expect(completion.system_fingerprint).toMatch(/^fp_/);
    expect(completion.usage?.completion_tokens).toBe(3);
    expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    expect(completion.usage?.completion_tokens_details?.reasoning_tokens).toBe(0);

    expect(fake.requests).toHaveLength(1);
    const [recorded] = fake.requests;
    expect(recorded.method).toBe('POST');
    expect(recorded.path).toBe('/v1/chat/completions');
    expect(recorded.headers.authorization).toBe('Bearer sk-test');
    expect((recorded.body as { model: string }).model).toBe('gpt-4o-mini');
    expect(recorded.receivedAt).toBeGreaterThan(Date.now() - 5_000);
  });

  it('cuts at max_tokens with finish_reason length', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o',
      max_completion_tokens: 2,
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    expect(completion.choices[0].finish_reason).toBe('length');
    expect(completion.choices[0].message.content).toBe('[alpha] one');
  });

  it('streams valid chunks, a final usage chunk with empty choices, and [DONE]', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream me please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { text, chunks } = await readChatStream(stream);
    expect(text).toBe('[alpha] stream me please');
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.at(-2)?.choices[0].finish_reason).toBe('stop');
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage?.completion_tokens).toBe(4);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);

    const raw = await rawStream({ stream_options: { include_usage: true } });
    expect(raw.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('streams exactly N content chunks when asked', async () => {
    fake.enqueue({ chunks: 7 });
    const lines = dataLines(await rawStream({}));
    // role chunk + 7 content chunks + finish chunk + [DONE]; no usage chunk without include_usage
    expect(lines).toHaveLength(10);
    expect(JSON.parse(lines[1]).usage).toBeUndefined();
  });

  it('calls a forced tool, non-stream and streamed as argument deltas', async () => {
    const tools = [
      {
        type: 'function' as const,
        function: { name: 'lookup', parameters: { type: 'object', properties: {} } },
      },
      {
        type: 'function' as const,
        function: { name: 'weather', parameters: { type: 'object', properties: {} } },
      },
    ];
    const messages = [{ role: 'user' as const, content: 'Berlin' }];
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages,
      tools,
      tool_choice: { type: 'function', function: { name: 'weather' } },
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    const call = completion.choices[0].message.tool_calls?.[0];
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && call.function.name).toBe('weather');
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ input: 'Berlin' });

    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages,
      tools,
      tool_choice: 'required',
      stream: true,
    });
    let args = '';
    let name = '';
    let deltas = 0;
    for await (const chunk of stream) {
      expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
      for (const tc of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += tc.function?.name ?? '';
        args += tc.function?.arguments ?? '';
        deltas++;
      }
    }
    expect(name).toBe('lookup');
    expect(deltas).toBeGreaterThan(2);
    expect(JSON.parse(args)).toEqual({ input: 'Berlin' });
  });

  it('answers with auto tool_choice in text (no forced call)', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'no tools needed' }],
      tools: [{ type: 'function', function: { name: 'lookup' } }],
    });
    expect(completion.choices[0].message.tool_calls).toBeUndefined();
    expect(completion.choices[0].message.content).toBe('[alpha] no tools needed');
  });
});

/**
 * Real OpenAI completion streams (provider-fixtures/openai/completion/) send `finish_reason: null` and
 * `usage: null` on intermediate chunks, which the OpenAPI document does not allow (it requires a
 * finish_reason string). The fake follows the wire; to still check every other field, the nulls are
 * dropped and the unfinished choice is given the schema's `stop`.
 */
function asSchemaAllows<T extends object>(chunk: T): T {
  const copy = structuredClone(chunk) as { usage?: unknown; choices: { finish_reason?: unknown }[] };
  if (copy.usage === null) delete copy.usage;
  for (const choice of copy.choices) if (choice.finish_reason === null) choice.finish_reason = 'stop';
  return copy as T;
}

describe('completions, embeddings, models', () => {
  it('answers legacy completions both ways', async () => {
    const completion = await client.completions.create({
      model: 'gpt-3.5-turbo-instruct',
      prompt: 'Once upon',
    });
    expectOpenAPIValid('CreateCompletionResponse', completion);
    expect(completion.choices[0].text).toBe('[alpha] Once upon');

    const stream = await client.completions.create({
      model: 'gpt-3.5-turbo-instruct',
      prompt: 'Once upon',
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usageChunks = 0;
    for await (const chunk of stream) {
      expectOpenAPIValid('CreateCompletionResponse', asSchemaAllows(chunk));
      text += chunk.choices[0]?.text ?? '';
      if (chunk.usage) usageChunks++;
    }
    expect(text).toBe('[alpha] Once upon');
    expect(usageChunks).toBe(1);
  });

  it('returns deterministic float embeddings, and base64 that decodes to the same vector', async () => {
    const floats = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['a', 'b'],
      encoding_format: 'float',
    });
    expectOpenAPIValid('CreateEmbeddingResponse', floats);
    expect(floats.data).toHaveLength(2);
    expect(floats.data[0].embedding).toEqual(fakeVector('alpha:a', 8));
    expect(floats.data[1].embedding).not.toEqual(floats.data[0].embedding);

    const res = await fetch(`${fake.url}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'text-embedding-3-small',
        input: 'a',
        encoding_format: 'base64',
        dimensions: 16,
      }),
    });
    const body = (await res.json()) as { data: { embedding: string }[] };
    const bytes = Buffer.from(body.data[0].embedding, 'base64');
    expect(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, 16))).toEqual(
      fakeVector('alpha:a', 16),
    );

    // The SDK asks for base64 by default and decodes it itself.
    const sdkDefault = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'a' });
    expect((fake.requests.at(-1)?.body as { encoding_format: string }).encoding_format).toBe('base64');
    expect(sdkDefault.data[0].embedding).toEqual(fakeVector('alpha:a', 8));
  });

  it('lists models', async () => {
    const res = await fetch(`${fake.url}/models`);
    const body = await res.json();
    expectOpenAPIValid('ListModelsResponse', body);
    expect((body as { data: { id: string }[] }).data.map((m) => m.id)).toContain('alpha-model');
  });
});

describe('pass-through endpoints', () => {
  it('returns binary speech, a text/plain error, and echoes anything else', async () => {
    const speech = await fetch(`${fake.url}/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-1', input: 'hello', voice: 'alloy' }),
    });
    expect(speech.headers.get('content-type')).toBe('audio/mpeg');
    const audio = Buffer.from(await speech.arrayBuffer());
    expect(audio.subarray(0, 3).toString('latin1')).toBe('ID3');
    expect(audio.includes(Buffer.from('alpha:hello'))).toBe(true);

    const textError = await fetch(`${fake.url}/fake/text-error?status=502`);
    expect(textError.status).toBe(502);
    expect(textError.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await textError.text()).toBe('alpha: upstream text error 502\n');

    const echo = await fetch(`${fake.url}/rerank?top=3&x=1&x=2`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-custom': 'yes' },
      body: JSON.stringify({ query: 'q' }),
    });
    const echoed = (await echo.json()) as Record<string, unknown>;
    expect(echoed).toMatchObject({
      fake: 'alpha',
      method: 'PUT',
      path: '/v1/rerank',
      query: { top: '3', x: ['1', '2'] },
      body: { query: 'q' },
    });
    expect((echoed.headers as Record<string, string>)['x-custom']).toBe('yes');
  });
});

describe('faults', () => {
  it('429 with retry-after and the real OpenAI body reaches the SDK as RateLimitError', async () => {
    fake.enqueue(faults.rateLimited(2));
    const err = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const rateLimit = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(rateLimit.headers.get('retry-after')).toBe('2');
    expect(rateLimit.code).toBe('rate_limit_exceeded');
    expectOpenAPIValid('ErrorResponse', { error: rateLimit.error });
  });

  it('the queue is consumed one per request, then the default answer returns', async () => {
    fake.enqueue(faults.serverError(), faults.contextLengthExceeded());
    const retrying = new OpenAI({ baseURL: fake.url, apiKey: 'sk-test', maxRetries: 0 });
    const first = await retrying.models.list().catch((e: unknown) => e);
    expect((first as { status: number }).status).toBe(500);
    const second = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(second).toBeInstanceOf(OpenAI.BadRequestError);
    expect((second as { code: string }).code).toBe('context_length_exceeded');
    expect(fake.pending()).toBe(0);
    const third = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(third.choices[0].message.content).toBe('[alpha] x');
  });

  it('SDK retries through a 503 onto a good answer', async () => {
    fake.enqueue(faults.overloaded());
    const retrying = new OpenAI({ baseURL: fake.url, apiKey: 'sk-test', maxRetries: 1 });
    const ok = await retrying.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'y' }],
    });
    expect(ok.choices[0].message.content).toBe('[alpha] y');
    expect(fake.requests).toHaveLength(2);
  });

  it('selects faults by model name: table and fake-status-NNN', async () => {
    const other = await startFakeOpenAI({ name: 'beta', models: { 'broken-model': faults.contentPolicy() } });
    try {
      const sdk = new OpenAI({ baseURL: other.url, apiKey: 'k', maxRetries: 0 });
      const policy = await sdk.chat.completions
        .create({ model: 'broken-model', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect((policy as { code: string }).code).toBe('content_policy_violation');
      const unavailable = await sdk.chat.completions
        .create({ model: 'fake-status-503', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect((unavailable as { status: number }).status).toBe(503);
      const fine = await sdk.chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(fine.choices[0].message.content).toBe('[beta] x');
    } finally {
      await other.close();
    }
  });

  it('reset destroys the socket before headers', async () => {
    fake.enqueue({ reset: true });
    const err = await client.models.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIConnectionError);
  });

  it('hang never answers (the client times out) and close() still returns', async () => {
    const other = await startFakeOpenAI();
    other.enqueue({ hang: true });
    const sdk = new OpenAI({ baseURL: other.url, apiKey: 'k', maxRetries: 0, timeout: 300 });
    const started = Date.now();
    const err = await sdk.models.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    other.enqueue({ hang: true });
    void fetch(`${other.url}/models`).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    await other.close();
  });

  it('firstByteDelayMs and latencyMs delay the answer', async () => {
    const slow = await startFakeOpenAI({ latencyMs: 60 });
    try {
      slow.enqueue({ firstByteDelayMs: 100 });
      const started = Date.now();
      await fetch(`${slow.url}/models`).then((r) => r.arrayBuffer());
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
      const again = Date.now();
      await fetch(`${slow.url}/models`).then((r) => r.arrayBuffer());
      expect(Date.now() - again).toBeGreaterThanOrEqual(55);
      expect(slow.pending()).toBe(0);
    } finally {
      await slow.close();
    }
  });

  it('cutAfter kills the stream mid-way: the SDK throws after the first chunks', async () => {
    fake.enqueue({ chunks: 60, cutAfter: 40, chunkDelayMs: 1 });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    let received = 0;
    const err = await (async () => {
      for await (const _chunk of stream) received++;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(received).toBe(40);
  });

  it('stallAfter keeps the socket open and sends nothing more', async () => {
    fake.enqueue({ stallAfter: 3 });
    const controller = new AbortController();
    const res = await fetch(`${fake.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm',
        messages: [{ role: 'user', content: 'a b c d e f' }],
        stream: true,
      }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    let text = '';
    const deadline = Date.now() + 500;
    while (Date.now() < deadline) {
      const next = await Promise.race([
        reader.read(),
        new Promise<null>((r) => setTimeout(() => r(null), deadline - Date.now())),
      ]);
      if (next === null || next.done) break;
      text += Buffer.from(next.value).toString();
    }
    controller.abort();
    expect(dataLines(text)).toHaveLength(3);
    expect(text).not.toContain('[DONE]');
  });

  it('malformedAt puts a non-JSON data line in the stream', async () => {
    fake.enqueue({ malformedAt: 2 });
    const lines = dataLines(await rawStream({}));
    expect(() => JSON.parse(lines[1])).toThrow();
    expect(JSON.parse(lines[2]).choices[0].delta.content).toBeDefined();
    expect(lines.at(-1)).toBe('[DONE]');

    fake.enqueue({ malformedAt: 2 });
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const err = await (async () => {
      for await (const _ of stream) void _;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
  });

  it('noDone ends the stream cleanly after the usage chunk without [DONE]', async () => {
    fake.enqueue({ noDone: true });
    const lines = dataLines(await rawStream({ stream_options: { include_usage: true } }));
    expect(lines).not.toContain('[DONE]');
    expect(JSON.parse(lines.at(-1)!).usage.total_tokens).toBeGreaterThan(0);
  });

  it('errorEventAfter sends an error object inside the 200 stream; the SDK raises it', async () => {
    fake.enqueue({ errorEventAfter: 2 });
    const lines = dataLines(await rawStream({}));
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[2])).toEqual(openAIErrors.streamInterrupted());

    fake.enqueue({ errorEventAfter: 2 });
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const err = await (async () => {
      for await (const _ of stream) void _;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
  });

  it('delayMs delays a non-stream answer', async () => {
    fake.enqueue({ delayMs: 120 });
    const started = Date.now();
    await client.models.list();
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
  });

  it('a status with a custom body and headers is sent as given', async () => {
    fake.enqueue({ status: 418, body: 'short and stout', headers: { 'x-teapot': '1' } });
    const res = await fetch(`${fake.url}/chat/completions`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(418);
    expect(res.headers.get('x-teapot')).toBe('1');
    expect(await res.text()).toBe('short and stout');
  });
});
