/**
 * The usage a pass-through answer is logged, priced and settled with: read by the target's adapter from its
 * provider's own answer shapes, with the conversions its translated calls use.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { UpstreamRelay } from '../../src/gateway/attempt.js';
import { readRelayedAnswer } from '../../src/gateway/passthrough/relayed-answer.js';
import { findAdapter } from '../../src/providers/registry.js';
import type { ProviderAdapter } from '../../src/providers/types.js';
import {
  encodeEvent,
  encodeException,
  encodeInvokeChunk,
  parseChunkLine,
} from '../fakes/bedrock/event-stream.js';
import { providerFixturesDir } from '../fakes/cohere/fixtures.js';

/**
 * `provider`'s answer of `contentType`, `parts` as its socket gives them (a throw: the connection lost), in
 * a pass-through relay with the usage reader of `provider`'s adapter and the fields `more` sets as a call
 * does; `relayed()` reads it through as the client is sent it.
 */
function relayAnswer(
  provider: string,
  contentType: string,
  parts: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  more: (adapter: ProviderAdapter) => Partial<UpstreamRelay> = () => ({}),
) {
  const adapter = findAdapter(provider)!;
  async function* body() {
    yield* parts;
  }
  const relay: UpstreamRelay = {
    status: 200,
    headers: { 'content-type': contentType },
    body: body(),
    usageOf: (parsed) => adapter.passthroughUsage(parsed),
    failureOf: adapter.passthroughStreamFailure,
    ...more(adapter),
  };
  const reader = readRelayedAnswer(relay);
  return {
    relay,
    reader,
    /** What the client is sent, once all of it has been. */
    async relayed(): Promise<Buffer> {
      const chunks: Uint8Array[] = [];
      for await (const chunk of relay.body as AsyncIterable<Uint8Array>) chunks.push(chunk);
      return Buffer.concat(chunks);
    },
  };
}

/** What is read of `provider`'s answer (as `relayAnswer`), which is relayed unchanged. */
async function readThrough(
  provider: string,
  contentType: string,
  parts: Uint8Array[],
  more?: (adapter: ProviderAdapter) => Partial<UpstreamRelay>,
) {
  const { reader, relayed } = relayAnswer(provider, contentType, parts, more);
  expect(reader).toBeDefined();
  expect((await relayed()).equals(Buffer.concat(parts))).toBe(true);
  return reader!.result();
}

/** `parts`, then the connection lost. */
async function* cutShort(parts: Uint8Array[]) {
  yield* parts;
  throw new Error('socket closed');
}

/** `bytes` in pieces of `size`, as a socket may give them. */
function pieces(bytes: Buffer, size: number): Uint8Array[] {
  const parts: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) parts.push(bytes.subarray(at, at + size));
  return parts;
}

async function usageOf(provider: string, answer: unknown) {
  const { relay, reader, relayed } = relayAnswer(provider, 'application/json', [
    Buffer.from(JSON.stringify(answer)),
  ]);
  // The same relay read again (the rate-limit step, then the log) shares the one copy.
  expect(readRelayedAnswer(relay)).toBe(reader);
  await relayed();
  return reader!.result()?.usage;
}

const message = {
  type: 'message',
  usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 3, cache_creation_input_tokens: 2 },
};
const messageUsage = {
  prompt_tokens: 15,
  completion_tokens: 5,
  total_tokens: 20,
  prompt_tokens_details: { cached_tokens: 3, cache_write_tokens: 2 },
};
const chat = { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } };

describe('pass-through usage', () => {
  it.each([
    ['openai', "OpenAI's chat and completions", chat, chat.usage],
    [
      'openai',
      "OpenAI's embeddings (no completion tokens)",
      { object: 'list', usage: { prompt_tokens: 8, total_tokens: 8 } },
      { prompt_tokens: 8, completion_tokens: 0, total_tokens: 8 },
    ],
    [
      'openai',
      "OpenAI's Responses, cached and reasoning tokens",
      {
        object: 'response',
        usage: {
          input_tokens: 10,
          input_tokens_details: { cached_tokens: 4 },
          output_tokens: 5,
          output_tokens_details: { reasoning_tokens: 2 },
          total_tokens: 15,
        },
      },
      {
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 2 },
      },
    ],
    ['groq', 'an OpenAI-compatible provider', chat, chat.usage],
    ['anthropic', "Anthropic's Messages, cache reads and writes counted as input", message, messageUsage],
    ['anthropic', "Anthropic's OpenAI-compatible chat completions", chat, chat.usage],
    [
      'bedrock',
      "Bedrock's Converse, cache reads counted as input",
      { usage: { inputTokens: 10, outputTokens: 5, totalTokens: 19, cacheReadInputTokens: 4 } },
      {
        prompt_tokens: 14,
        completion_tokens: 5,
        total_tokens: 19,
        prompt_tokens_details: { cached_tokens: 4 },
      },
    ],
    ['bedrock', "Bedrock's InvokeModel of an Anthropic model", message, messageUsage],
    [
      'google',
      "Gemini's generateContent, thoughts counted as output",
      {
        usageMetadata: {
          promptTokenCount: 10,
          candidatesTokenCount: 5,
          thoughtsTokenCount: 7,
          totalTokenCount: 22,
        },
      },
      {
        prompt_tokens: 10,
        completion_tokens: 12,
        total_tokens: 22,
        completion_tokens_details: { reasoning_tokens: 7 },
      },
    ],
    ['vertex-ai', "Vertex AI's rawPredict of an Anthropic model", message, messageUsage],
    [
      'cohere',
      "Cohere's v2 chat",
      {
        id: 'c',
        usage: {
          tokens: { input_tokens: 12, output_tokens: 4 },
          billed_units: { input_tokens: 9, output_tokens: 3 },
        },
      },
      { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
    ],
  ])('%s: reads %s', async (provider, _name, answer, usage) => {
    expect(await usageOf(provider, answer)).toEqual(usage);
  });

  it('reads no usage from an answer without one, or of a shape its provider does not give', async () => {
    expect(await usageOf('openai', { id: 'x' })).toBeUndefined();
    expect(await usageOf('anthropic', { usage: { input_tokens: 'ten' } })).toBeUndefined();
    expect(
      await usageOf('openai', { usageMetadata: { promptTokenCount: 1, totalTokenCount: 1 } }),
    ).toBeUndefined();
    expect(await usageOf('google', [1, 2])).toBeUndefined();
  });
});

/** The recorded stream's events as server-sent events, split at awkward places as a socket may. */
function sse(events: string[], cut = false): Uint8Array[] {
  const text = events.map((event) => `data: ${event}\n\n`).join('') + (cut ? '' : 'data: [DONE]\n\n');
  return pieces(Buffer.from(cut ? text.slice(0, Math.floor(text.length * 0.6)) : text), 97);
}

function recordedEvents(provider: string, name: string): string[] {
  return readFileSync(path.join(providerFixturesDir(provider), name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

const streamRead = (provider: string, parts: Uint8Array[], maxEventBytes?: number) =>
  readThrough(provider, 'text/event-stream; charset=utf-8', parts, () => ({ maxEventBytes }));

describe('pass-through usage of a stream (server-sent events)', () => {
  it("OpenAI's chat stream: the usage of its last chunk", async () => {
    const read = await streamRead('openai', sse(recordedEvents('openai', 'chat/openai-text.chunks.txt')));
    expect(read?.model).toBe('gpt-4.1-nano-2025-04-14');
    expect(read?.usage).toMatchObject({ prompt_tokens: 16, completion_tokens: 300, total_tokens: 316 });
  });

  it("the Responses API's stream: the usage of response.completed, the model of response.created", async () => {
    const events = recordedEvents('openai', 'responses/openai-apply-patch-tool.1.chunks.txt');
    const read = await streamRead('openai', sse(events));
    expect(read?.model).toMatch(/^gpt-/);
    expect(read?.usage).toMatchObject({ prompt_tokens: 642, completion_tokens: 67, total_tokens: 709 });
  });

  it("Anthropic's stream: message_start's model, message_delta's counts", async () => {
    const read = await streamRead('anthropic', sse(recordedEvents('anthropic', 'anthropic-text.chunks.txt')));
    expect(read).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      usage: expect.objectContaining({ prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 }),
    });
  });

  it('an Anthropic stream whose message_delta counts only the output: the input from message_start', async () => {
    const events = [
      {
        type: 'message_start',
        message: { model: 'claude-x', usage: { input_tokens: 20, output_tokens: 1 } },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ].map((event) => JSON.stringify(event));
    const read = await streamRead('anthropic', sse(events));
    expect(read?.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 });
  });

  it("Gemini's stream (alt=sse): the running totals of its last chunk, thoughts counted as output", async () => {
    const read = await streamRead('google', sse(recordedEvents('google', 'google-text.chunks.txt')));
    expect(read).toEqual({
      model: 'gemini-3-pro-preview',
      usage: expect.objectContaining({ prompt_tokens: 9, completion_tokens: 208, total_tokens: 217 }),
    });
  });

  it('an event past GATEWAY_UPSTREAM_EVENT_MAX_BYTES ends the reading, not the relay', async () => {
    const events = recordedEvents('openai', 'chat/openai-text.chunks.txt');
    const large = [JSON.stringify({ padding: 'x'.repeat(8192) }), ...events];
    // Within the bound the stream is read to its usage; past it the reader holds no more of the event
    // (the usage is then unknown), and the stream is relayed unchanged all the same (streamRead checks).
    expect((await streamRead('openai', sse(large), 16_384))?.usage).toMatchObject({ total_tokens: 316 });
    expect(await streamRead('openai', sse(large), 4096)).toBeUndefined();
  });

  it('an Anthropic stream ended by an error event: the failure, and the usage reported before it', async () => {
    // message_start (12 in, 1 out), content_block_start, ping, "Hello", "! I", then Anthropic's error.
    const events = recordedEvents('anthropic', 'anthropic-text.chunks.txt').slice(0, 5);
    const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
    const text =
      events.map((event) => `event: ${JSON.parse(event).type}\ndata: ${event}\n\n`).join('') +
      `event: error\ndata: ${JSON.stringify(error)}\n\n`;
    const read = await streamRead('anthropic', pieces(Buffer.from(text), 97));
    expect(read?.model).toBe('claude-sonnet-4-5-20250929');
    expect(read?.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 });
    expect(read?.failure).toMatchObject({ status: 529, code: 'overloaded_error', message: 'Overloaded' });
  });

  it('an OpenAI stream ended by an error chunk: the failure, no usage', async () => {
    const events = recordedEvents('openai', 'chat/openai-text.chunks.txt').slice(0, 4);
    const error = {
      error: { message: 'The server had an error while processing your request.', type: 'server_error' },
    };
    const read = await streamRead('openai', sse([...events, JSON.stringify(error)], false));
    expect(read?.model).toBe('gpt-4.1-nano-2025-04-14');
    expect(read?.usage).toBeUndefined();
    expect(read?.failure).toMatchObject({ status: 502, type: 'server_error', provider: 'openai' });
  });

  it("a Claude stream on Vertex AI (streamRawPredict) ended by Anthropic's error event", async () => {
    const events = recordedEvents('anthropic', 'anthropic-text.chunks.txt').slice(0, 3);
    const error = JSON.stringify({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
    const read = await streamRead('vertex-ai', sse([...events, error]));
    expect(read?.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 1 });
    expect(read?.failure).toMatchObject({ status: 529, code: 'overloaded_error', provider: 'vertex-ai' });
  });

  it("a Gemini stream (alt=sse) ended by Google's error object: the failure, the running totals before it", async () => {
    const events = recordedEvents('google', 'google-text.chunks.txt').slice(0, 1);
    const error = JSON.stringify({
      error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' },
    });
    const read = await streamRead('google', sse([...events, error], false));
    expect(read?.model).toBe('gemini-3-pro-preview');
    expect(read?.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 190, total_tokens: 199 });
    expect(read?.failure).toMatchObject({ status: 503, code: 'unavailable', provider: 'google' });
  });

  it("a Gemini stream on Vertex AI ended by Google's error object, its status from the rpc code", async () => {
    const events = recordedEvents('google', 'google-text.chunks.txt').slice(0, 1);
    const error = JSON.stringify({ error: { message: 'Quota exceeded.', status: 'RESOURCE_EXHAUSTED' } });
    const read = await streamRead('vertex-ai', sse([...events, error], false));
    expect(read?.usage).toMatchObject({ prompt_tokens: 9 });
    expect(read?.failure).toMatchObject({ status: 429, code: 'resource_exhausted', provider: 'vertex-ai' });
  });

  it('a Cohere stream ended by message-end with finish_reason ERROR: the failure, and its usage', async () => {
    const events = recordedEvents('cohere', 'cohere-text.chunks.txt').slice(0, 5);
    const end = JSON.stringify({
      type: 'message-end',
      delta: {
        finish_reason: 'ERROR',
        error: 'internal error while generating',
        usage: { billed_units: { input_tokens: 12, output_tokens: 3 } },
      },
    });
    const text = [...events, end]
      .map((event) => `event: ${JSON.parse(event).type}\ndata: ${event}\n\n`)
      .join('');
    const read = await streamRead('cohere', pieces(Buffer.from(text), 97));
    expect(read?.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
    expect(read?.failure).toMatchObject({
      status: 500,
      message: 'internal error while generating',
      provider: 'cohere',
    });
  });

  it('a Cohere stream ended by an error object written in place of an event', async () => {
    const events = recordedEvents('cohere', 'cohere-text.chunks.txt').slice(0, 3);
    const read = await streamRead('cohere', sse([...events, JSON.stringify({ message: 'stream failed' })]));
    expect(read?.failure).toMatchObject({ status: 500, message: 'stream failed', provider: 'cohere' });
  });

  it("a Responses stream ended by response.failed: the Response's error, and its usage", async () => {
    const events = recordedEvents('openai', 'responses/openai-apply-patch-tool.1.chunks.txt').slice(0, 2);
    const failed = {
      type: 'response.failed',
      sequence_number: 2,
      response: {
        object: 'response',
        status: 'failed',
        model: 'gpt-5-nano-2025-08-07',
        error: { code: 'server_error', message: 'The model failed to generate a response.' },
        usage: { input_tokens: 20, output_tokens: 4, total_tokens: 24 },
      },
    };
    const text = [...events, JSON.stringify(failed)]
      .map((event) => `event: ${JSON.parse(event).type}\ndata: ${event}\n\n`)
      .join('');
    const read = await streamRead('openai', pieces(Buffer.from(text), 97));
    expect(read?.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 });
    expect(read?.failure).toMatchObject({
      status: 500,
      code: 'server_error',
      message: 'The model failed to generate a response.',
    });
  });

  it("a Responses stream's error event, sent without its event name, is its failure", async () => {
    // OpenAI's recorded stream: response.created, response.in_progress, error, response.failed.
    const events = recordedEvents('openai', 'responses/openai-error.1.chunks.txt');
    const bare = JSON.stringify({ type: 'error', code: 'server_error', message: 'Try again.', param: null });
    const read = await streamRead('azure-openai', sse([...events.slice(0, 2), bare], false));
    expect(read?.failure).toMatchObject({ code: 'server_error', message: 'Try again.' });
    const recorded = await streamRead('openai', sse(events, false));
    expect(recorded?.failure).toMatchObject({ code: 'insufficient_quota', provider: 'openai' });
  });

  it('a stream ended by an error event, then the connection lost: the failure and the usage before it', async () => {
    const events = recordedEvents('anthropic', 'anthropic-text.chunks.txt').slice(0, 5);
    const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
    const text =
      events.map((event) => `event: ${JSON.parse(event).type}\ndata: ${event}\n\n`).join('') +
      `event: error\ndata: ${JSON.stringify(error)}\n\n`;
    const { reader, relayed } = relayAnswer(
      'anthropic',
      'text/event-stream',
      cutShort(pieces(Buffer.from(text), 97)),
    );
    await expect(relayed()).rejects.toThrow('socket closed');
    expect(reader!.result()).toMatchObject({
      model: 'claude-sonnet-4-5-20250929',
      usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 },
      failure: { status: 529, code: 'overloaded_error' },
    });
  });

  it('a stream that ends well reports no failure', async () => {
    const read = await streamRead('anthropic', sse(recordedEvents('anthropic', 'anthropic-text.chunks.txt')));
    expect(read?.failure).toBeUndefined();
  });

  it('a stream cut short reads no usage', async () => {
    const events = recordedEvents('openai', 'chat/openai-text.chunks.txt');
    const { reader, relayed } = relayAnswer('openai', 'text/event-stream', cutShort(sse(events, true)));
    await expect(relayed()).rejects.toThrow('socket closed');
    expect(reader!.result()).toBeUndefined();
  });
});

/** Frames as a socket may split them: across frame boundaries, a few bytes at a time. */
function split(frames: Uint8Array[], cut = false): Uint8Array[] {
  const whole = Buffer.concat(frames);
  return pieces(cut ? whole.subarray(0, Math.floor(whole.length * 0.6)) : whole, 61);
}

const EVENT_STREAM = 'application/vnd.amazon.eventstream';
const eventStreamDecoder = (adapter: ProviderAdapter) => ({ frameDecoder: adapter.createFrameDecoder });

const eventStreamRead = (parts: Uint8Array[]) =>
  readThrough('bedrock', EVENT_STREAM, parts, eventStreamDecoder);

/** Anthropic's recorded stream as InvokeModelWithResponseStream sends it: Bedrock's own counts on the last event. */
function invokeChunks(events: string[], metrics: Record<string, number>): Uint8Array[] {
  return events.map((line, i) => {
    if (i < events.length - 1) return encodeInvokeChunk(line);
    return encodeInvokeChunk(
      JSON.stringify({ ...JSON.parse(line), 'amazon-bedrock-invocationMetrics': metrics }),
    );
  });
}

describe('pass-through usage of a Bedrock stream (AWS event-stream, not server-sent events)', () => {
  it("ConverseStream: the usage of its metadata event; the model is the path's", async () => {
    const frames = recordedEvents('amazon-bedrock', 'amazon-bedrock-text.chunks.txt').map((line) => {
      const { eventType, payload } = parseChunkLine(line);
      return encodeEvent(eventType, payload);
    });
    const read = await eventStreamRead(split(frames));
    expect(read).toEqual({
      model: undefined,
      usage: expect.objectContaining({ prompt_tokens: 22, completion_tokens: 55, total_tokens: 77 }),
    });
  });

  it('ConverseStream: cache reads and writes in the metadata usage are counted as input', async () => {
    const frames = [
      encodeEvent('messageStart', { role: 'assistant' }),
      encodeEvent('messageStop', { stopReason: 'end_turn' }),
      encodeEvent('metadata', {
        usage: {
          inputTokens: 10,
          outputTokens: 5,
          cacheReadInputTokens: 4,
          cacheWriteInputTokens: 2,
          totalTokens: 21,
        },
        metrics: { latencyMs: 100 },
      }),
    ];
    const read = await eventStreamRead(split(frames));
    expect(read?.usage).toEqual({
      prompt_tokens: 16,
      completion_tokens: 5,
      total_tokens: 21,
      prompt_tokens_details: { cached_tokens: 4, cache_write_tokens: 2 },
    });
  });

  it("InvokeModelWithResponseStream of a Claude model: message_start's model, the Anthropic events' counts", async () => {
    const events = recordedEvents('anthropic', 'anthropic-text.chunks.txt');
    const metrics = {
      inputTokenCount: 12,
      outputTokenCount: 30,
      invocationLatency: 900,
      firstByteLatency: 300,
    };
    const read = await eventStreamRead(split(invokeChunks(events, metrics)));
    expect(read).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      usage: expect.objectContaining({ prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 }),
    });
  });

  it("InvokeModelWithResponseStream of a Claude model ended by Anthropic's error event", async () => {
    const events = recordedEvents('anthropic', 'anthropic-text.chunks.txt').slice(0, 4);
    const error = JSON.stringify({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
    const read = await eventStreamRead(split([...events, error].map((line) => encodeInvokeChunk(line))));
    expect(read?.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 1 });
    expect(read?.failure).toMatchObject({ status: 529, code: 'overloaded_error', provider: 'bedrock' });
  });

  it("InvokeModelWithResponseStream of a model with no usage of its own: Bedrock's invocation metrics", async () => {
    // Meta Llama's chunks: counts of its own only in part, Bedrock's on the last.
    const events = [
      { generation: 'Hello', prompt_token_count: 18, generation_token_count: 1, stop_reason: null },
      { generation: ' there', prompt_token_count: null, generation_token_count: 2, stop_reason: 'stop' },
    ].map((event) => JSON.stringify(event));
    const metrics = {
      inputTokenCount: 18,
      outputTokenCount: 2,
      cacheReadInputTokenCount: 0,
      cacheWriteInputTokenCount: 0,
      invocationLatency: 300,
      firstByteLatency: 100,
    };
    const read = await eventStreamRead(split(invokeChunks(events, metrics)));
    expect(read?.usage).toMatchObject({ prompt_tokens: 18, completion_tokens: 2, total_tokens: 20 });
  });

  it('invocation metrics with cache reads and writes count them as input', async () => {
    const events = [JSON.stringify({ type: 'message_stop' })];
    const metrics = {
      inputTokenCount: 3,
      outputTokenCount: 13,
      cacheReadInputTokenCount: 100,
      cacheWriteInputTokenCount: 25,
    };
    const read = await eventStreamRead(split(invokeChunks(events, metrics)));
    expect(read?.usage).toEqual({
      prompt_tokens: 128,
      completion_tokens: 13,
      total_tokens: 141,
      prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 25 },
    });
  });

  it('a frame that does not decode (its checksum broken) is relayed all the same, and no usage is read', async () => {
    const frames = recordedEvents('amazon-bedrock', 'amazon-bedrock-text.chunks.txt').map((line) => {
      const { eventType, payload } = parseChunkLine(line);
      return Buffer.from(encodeEvent(eventType, payload));
    });
    frames[1][frames[1].length - 1] ^= 0xff;
    expect(await eventStreamRead(split(frames))).toBeUndefined();
  });

  it('an exception in the stream is relayed and read as the failure; a stream cut short reads no usage', async () => {
    const frames = [
      encodeEvent('messageStart', { role: 'assistant' }),
      encodeException('throttlingException', 'Too many tokens'),
    ];
    const read = await eventStreamRead(split(frames));
    expect(read?.usage).toBeUndefined();
    expect(read?.failure).toMatchObject({
      status: 429,
      code: 'throttlingException',
      message: 'Too many tokens',
      provider: 'bedrock',
    });

    const whole = recordedEvents('amazon-bedrock', 'amazon-bedrock-text.chunks.txt').map((line) => {
      const { eventType, payload } = parseChunkLine(line);
      return encodeEvent(eventType, payload);
    });
    const { reader, relayed } = relayAnswer(
      'bedrock',
      EVENT_STREAM,
      cutShort(split(whole, true)),
      eventStreamDecoder,
    );
    await expect(relayed()).rejects.toThrow('socket closed');
    expect(reader!.result()).toBeUndefined();
  });
});

describe("pass-through usage in the answer's headers (Bedrock's InvokeModel)", () => {
  async function read(type: string, body: string, headers: Record<string, string>) {
    const { reader, relayed } = relayAnswer('bedrock', type, [Buffer.from(body)], (adapter) => ({
      headers: { 'content-type': type, ...headers },
      headerUsage: adapter.passthroughHeaderUsage?.(headers),
    }));
    await relayed();
    return reader?.result()?.usage;
  }
  const counts = {
    'x-amzn-bedrock-input-token-count': '10',
    'x-amzn-bedrock-output-token-count': '4',
    'x-amzn-bedrock-cache-read-input-token-count': '6',
    'x-amzn-bedrock-cache-write-input-token-count': '0',
  };

  it('counts for a JSON body without usage, cache reads as input', async () => {
    expect(await read('application/json', '{"generation":"hi"}', counts)).toEqual({
      prompt_tokens: 16,
      completion_tokens: 4,
      total_tokens: 20,
      prompt_tokens_details: { cached_tokens: 6 },
    });
  });

  it("the body's own usage comes first", async () => {
    const message = JSON.stringify({ type: 'message', usage: { input_tokens: 3, output_tokens: 2 } });
    expect(await read('application/json', message, counts)).toMatchObject({
      prompt_tokens: 3,
      total_tokens: 5,
    });
  });

  it('counts for a body of another type', async () => {
    expect(await read('image/png', 'PNG', counts)).toMatchObject({ prompt_tokens: 16, total_tokens: 20 });
  });

  it('none without the input count', async () => {
    expect(
      await read('application/json', '{}', { 'x-amzn-bedrock-output-token-count': '4' }),
    ).toBeUndefined();
  });
});

describe('pass-through usage of a JSON answer larger than is kept whole', () => {
  it('an embeddings list of thousands of vectors: the usage and model after its data', async () => {
    const answer = {
      object: 'list',
      data: Array.from({ length: 3000 }, (_, index) => ({
        object: 'embedding',
        index,
        embedding: Array.from({ length: 64 }, (__, i) => Math.sin(index + i)),
      })),
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 12_000, total_tokens: 12_000 },
    };
    const bytes = Buffer.from(JSON.stringify(answer));
    expect(bytes.length).toBeGreaterThan(2 << 20);
    expect(await readThrough('openai', 'application/json', pieces(bytes, 65_521))).toEqual({
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 12_000, completion_tokens: 0, total_tokens: 12_000 },
    });
  });
});

describe("pass-through usage of a JSON array of answers (Gemini's streamGenerateContent without alt=sse)", () => {
  async function arrayRead(text: string) {
    return readThrough('google', 'application/json; charset=UTF-8', pieces(Buffer.from(text), 4093));
  }
  const events = recordedEvents('google', 'google-text.chunks.txt');
  const expected = {
    model: 'gemini-3-pro-preview',
    usage: expect.objectContaining({ prompt_tokens: 9, completion_tokens: 208, total_tokens: 217 }),
  };

  it('the running totals of its last answer, as the stream of server-sent events gives them', async () => {
    expect(await arrayRead(`[${events.join(',\r\n')}]`)).toEqual(expected);
  });

  it('one larger than is kept whole', async () => {
    const many = [...Array.from({ length: 4000 }, () => events[0]), ...events];
    expect(many.join(',').length).toBeGreaterThan(1 << 20);
    expect(await arrayRead(`[${many.join(',\r\n')}]`)).toEqual(expected);
  });
});
