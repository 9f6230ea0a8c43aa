// OpenAI-wire answers that break OpenAI's schema in ways clients trip on, as Mistral-family models send
// them (directly and through Azure AI): tool calls without `type`, streamed tool-call deltas without
// `index`, an assistant message without `content`. The adapters repair exactly those, and relay every
// other answer untouched (the same object; stream chunks keep their `raw` text).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk } from '../../src/core/openai-types.js';
import { findAdapter } from '../../src/providers/registry.js';
import type { AdapterRequest, ProviderAdapter, StreamOutput } from '../../src/providers/types.js';
import { providerFixturesDir } from '../fakes/cohere/fixtures.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { azureRequest } from './azure/helpers.js';
import { createStreamTranslator, parseResponse } from './operations.js';

const mistralDir = providerFixturesDir('mistral');
const readJson = (name: string) =>
  JSON.parse(readFileSync(path.join(mistralDir, name), 'utf8')) as Record<string, unknown>;
const readChunks = (name: string) =>
  readFileSync(path.join(mistralDir, name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');

const mistral = findAdapter('mistral-ai') as ProviderAdapter;
const azureAI = findAdapter('azure-ai') as ProviderAdapter;

function mistralRequest(stream: boolean): AdapterRequest {
  return {
    endpoint: 'chat',
    body: { model: 'mistral-small-latest', messages: [{ role: 'user', content: 'hi' }], stream },
    stream,
    target: { provider: 'mistral-ai', api_key: 'k' },
    forwardHeaders: {},
    clientHeaders: {},
    strictCompat: false,
  };
}

const requests: Array<[string, ProviderAdapter, (stream: boolean) => AdapterRequest]> = [
  ['mistral-ai', mistral, mistralRequest],
  [
    'azure-ai',
    azureAI,
    (stream) => azureRequest('azure-ai', { model: 'mistral-large', messages: [], stream }),
  ],
];

function answer(adapter: ProviderAdapter, req: AdapterRequest, body: unknown) {
  return parseResponse(adapter, req, { status: 200, headers: {}, body }) as {
    choices: Array<{ message: Record<string, unknown> & { tool_calls?: Array<Record<string, unknown>> } }>;
  };
}

function translate(adapter: ProviderAdapter, req: AdapterRequest, payloads: string[]): StreamOutput[] {
  const translator = createStreamTranslator(adapter, req);
  return payloads.flatMap((data) => translator.push({ kind: 'sse', event: undefined, data }));
}

const chunksOf = (outputs: StreamOutput[]) =>
  outputs.flatMap((output) => (output.type === 'chunk' ? [output] : []));

const toolCallDeltas = (outputs: StreamOutput[]): Array<Record<string, unknown>> =>
  chunksOf(outputs).flatMap((output) => {
    const calls: unknown = (output.chunk as ChatCompletionChunk).choices[0]?.delta?.tool_calls;
    return (calls ?? []) as Array<Record<string, unknown>>;
  });

describe('non-streamed OpenAI-wire answers that break the schema', () => {
  it.each(requests)('%s: gives tool calls their type and the message its content', (_id, adapter, req) => {
    const recorded = readJson('mistral-tool-call.json');
    const before = JSON.stringify(recorded);
    const out = answer(adapter, req(false), recorded);
    const message = out.choices[0]!.message;
    expect(message.content).toBeNull();
    expect(message.tool_calls).toEqual([
      {
        id: 'gSIMJiOkT',
        type: 'function',
        function: { name: 'weather', arguments: '{"location": "San Francisco"}' },
      },
    ]);
    for (const call of message.tool_calls!) expectOpenAPIValid('ChatCompletionMessageToolCall', call);
    // The upstream's object is not changed under the caller's feet.
    expect(JSON.stringify(recorded)).toBe(before);
  });

  it('azure-ai: the repaired answer is a valid OpenAI chat completion, strict or not', () => {
    for (const strict of [false, true]) {
      const req = azureRequest('azure-ai', { model: 'mistral-large', messages: [] }, { strict });
      expectOpenAPIValid(
        'CreateChatCompletionResponse',
        answer(azureAI, req, readJson('mistral-tool-call.json')),
      );
    }
  });

  it('relays an answer that needs nothing as the very same object', () => {
    const ok = {
      id: 'x',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          logprobs: null,
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
        },
      ],
    };
    expect(parseResponse(mistral, mistralRequest(false), { status: 200, headers: {}, body: ok })).toBe(ok);
    const text = JSON.parse(
      readFileSync(path.join(providerFixturesDir('openai'), 'chat', 'openai-text.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(parseResponse(mistral, mistralRequest(false), { status: 200, headers: {}, body: text })).toBe(
      text,
    );
  });
});

describe('streamed OpenAI-wire answers that break the schema', () => {
  it.each(requests)('%s: gives the recorded tool-call delta its index and type', (_id, adapter, req) => {
    const outputs = translate(adapter, req(true), readChunks('mistral-tool-call.chunks.txt'));
    const deltas = toolCallDeltas(outputs);
    expect(deltas).toEqual([
      {
        index: 0,
        id: 'gSIMJiOkT',
        type: 'function',
        function: { name: 'weather', arguments: '{"location": "San Francisco"}' },
      },
    ]);
    for (const output of chunksOf(outputs))
      expectOpenAPIValid('CreateChatCompletionStreamResponse', output.chunk);
  });

  it('drops the raw text of a repaired chunk only, keeping it for the others', () => {
    const payloads = readChunks('mistral-tool-call.chunks.txt');
    const chunks = chunksOf(translate(mistral, mistralRequest(true), payloads));
    expect(chunks[0]!.raw).toBe(payloads[0]);
    expect(chunks[1]!.raw).toBeUndefined();
    const text = readChunks('mistral-text.chunks.txt');
    for (const [i, chunk] of chunksOf(translate(mistral, mistralRequest(true), text)).entries()) {
      expect(chunk.raw).toBe(text[i]);
    }
  });

  it('numbers parallel tool calls by their position, following each call by its id across chunks', () => {
    const chunk = (calls: unknown[], finish: string | null = null) =>
      JSON.stringify({
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index: 0, delta: { tool_calls: calls }, finish_reason: finish }],
      });
    const call = (id: string, name: string, args: string) => ({ id, function: { name, arguments: args } });
    const outputs = translate(mistral, mistralRequest(true), [
      chunk([call('a', 'weather', '')]),
      chunk([{ id: 'a', function: { arguments: '{"city":' } }]),
      chunk([call('b', 'time', '{'), call('c', 'news', '{}')]),
      chunk([{ function: { arguments: '}' } }]),
      chunk([{ id: 'a', function: { arguments: '"Paris"}' } }]),
      chunk([{ id: 'b', function: { arguments: '}' } }], 'tool_calls'),
    ]);
    expect(toolCallDeltas(outputs).map((delta) => [delta.index, delta.id, delta.type])).toEqual([
      [0, 'a', 'function'],
      [0, 'a', undefined],
      [1, 'b', 'function'],
      [2, 'c', 'function'],
      [2, undefined, undefined],
      [0, 'a', undefined],
      [1, 'b', undefined],
    ]);
    for (const output of chunksOf(outputs))
      expectOpenAPIValid('CreateChatCompletionStreamResponse', output.chunk);
  });
});

describe('recorded answers of OpenAI-wire providers, as the client gets them', () => {
  // OpenAI's schema requires message.refusal and choice.logprobs (null when there is none) and has
  // tool_calls absent rather than null; typed clients (openai-java) refuse an answer without them.
  it.each([
    ['deepseek', 'deepseek/chat/deepseek-text.json'],
    ['deepseek', 'deepseek/chat/deepseek-reasoning.json'],
    ['deepseek', 'deepseek/chat/deepseek-tool-call.json'],
    ['x-ai', 'xai/xai-text.json'],
    ['x-ai', 'xai/xai-tool-call.json'],
    ['mistral-ai', 'mistral/mistral-text.json'],
    ['mistral-ai', 'mistral/mistral-tool-call.json'],
    ['mistral-ai', 'mistral/mistral-reasoning.json'],
    ['groq', 'groq/groq-text.json'],
    ['groq', 'groq/groq-reasoning.json'],
    ['groq', 'groq/groq-tool-call.json'],
  ])('%s %s is a valid OpenAI chat completion', (provider, fixture) => {
    const file = path.join(providerFixturesDir(fixture.split('/')[0]!), ...fixture.split('/').slice(1));
    const recorded = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const adapter = findAdapter(provider) as ProviderAdapter;
    const req = { ...mistralRequest(false), target: { provider, api_key: 'k' }, strictCompat: true };
    expectOpenAPIValid('CreateChatCompletionResponse', answer(adapter, req, recorded));
  });
});

describe("Mistral's reasoning models, whose content is a list of thinking and text blocks", () => {
  const thought = 'The user is asking for 2+2. This is basic arithmetic. 2+2=4.';

  it.each([true, false])('the answer has its text as content (strict: %s)', (strictCompat) => {
    const req = { ...mistralRequest(false), strictCompat };
    const message = answer(mistral, req, readJson('mistral-reasoning.json')).choices[0]!.message;
    expect(message.content).toBe('2 + 2 = 4');
    if (strictCompat) expect(message).not.toHaveProperty('content_blocks');
    else
      expect(message.content_blocks).toEqual([
        { type: 'thinking', thinking: thought },
        { type: 'text', text: '2 + 2 = 4' },
      ]);
    expectOpenAPIValid(
      'CreateChatCompletionResponse',
      answer(mistral, req, readJson('mistral-reasoning.json')),
    );
  });

  it.each([true, false])('the stream has its text as content (strict: %s)', (strictCompat) => {
    const req = { ...mistralRequest(true), strictCompat };
    const chunks = chunksOf(translate(mistral, req, readChunks('mistral-reasoning.chunks.txt')));
    const deltas = chunks.map((output) => (output.chunk as ChatCompletionChunk).choices[0]!.delta);
    expect(deltas.map((delta) => delta.content ?? '').join('')).toBe('2 + 2 = 4');
    const thinking = deltas.flatMap((delta) => delta.content_blocks ?? []);
    if (strictCompat) expect(thinking).toEqual([]);
    else {
      expect(thinking.map((block) => block.index)).toEqual([0, 0]);
      expect(thinking.map((block) => block.delta.thinking).join('')).toBe(thought);
    }
    for (const output of chunks) {
      if (strictCompat) expectOpenAPIValid('CreateChatCompletionStreamResponse', output.chunk);
    }
  });
});
