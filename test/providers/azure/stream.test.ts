import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { azureAIAdapter } from '../../../src/providers/azure-ai/index.js';
import { azureOpenAIAdapter } from '../../../src/providers/azure-openai/index.js';
import type { ChatCompletionChunk } from '../../../src/core/openai-types.js';
import type { StreamOutput } from '../../../src/providers/types.js';
import { providerFixturesDir } from '../../fakes/cohere/fixtures.js';
import { AZURE_CHAT_STREAM_FIXTURE } from '../../fakes/azure/recorded.js';
import { expectOpenAPIValid } from '../../helpers/openapi.js';
import { azureRequest } from './helpers.js';
import { createStreamTranslator } from '../operations.js';

const azureDir = providerFixturesDir('azure');
const STREAMS = [
  ...readdirSync(azureDir)
    .filter((file) => file.endsWith('.chunks.txt'))
    .map((file) => path.join(azureDir, file)),
  // Azure's chat-completions stream is recorded beside OpenAI's.
  AZURE_CHAT_STREAM_FIXTURE,
].sort();

// Skipped: every stream of provider-fixtures/azure/ records Azure's Responses API (`response.created`,
// `response.output_text.delta`…), which is not what these adapters speak (chat completions, completions,
// embeddings). The test below checks that each skipped file really is a Responses API stream.
const SKIPPED = [
  'azure-code-interpreter-tool.1.chunks.txt',
  'azure-image-generation-tool.1.chunks.txt',
  'azure-reasoning-encrypted-content.1.chunks.txt',
  'azure-text.1.chunks.txt',
  'azure-tool-call.1.chunks.txt',
  'azure-web-search-preview-tool.1.chunks.txt',
  'openai-file-search-tool.1.chunks.txt',
  'openai-file-search-tool.2.chunks.txt',
];

const readEvents = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

interface RecordedChunk {
  object?: string;
  choices: Array<{
    delta?: { content?: string | null; reasoning_content?: string | null };
    finish_reason?: string | null;
  }>;
  usage?: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    reasoning_tokens?: number;
    completion_tokens_details?: { reasoning_tokens?: number };
  } | null;
}

describe('Azure stream translation over every recorded stream', () => {
  it('skips only Responses API streams', () => {
    for (const name of SKIPPED) {
      const first = readEvents(path.join(azureDir, name))[0]!;
      expect(String(first.type)).toMatch(/^response\./);
    }
  });

  const replayed = STREAMS.filter((file) => !SKIPPED.includes(path.basename(file)));
  it.each(
    replayed.flatMap((file) => [true, false].map((strict) => [path.basename(file), strict, file] as const)),
  )('%s (strict %s)', (_name, strict, file) => {
    const events = readEvents(file) as unknown as RecordedChunk[];
    const expectedText = events.map((e) => e.choices[0]?.delta?.content ?? '').join('');
    const expectedThinking = events.map((e) => e.choices[0]?.delta?.reasoning_content ?? '').join('');
    const expectedFinish = events.map((e) => e.choices[0]?.finish_reason).filter(Boolean);
    const recordedUsage = events.find((e) => e.usage)!.usage!;
    const expectedReasoning =
      recordedUsage.completion_tokens_details?.reasoning_tokens ?? recordedUsage.reasoning_tokens;
    // Events that are not chunks (Azure's leading prompt-verdict event) are dropped.
    const expectedChunks = events.filter((e) => e.object === 'chat.completion.chunk').length;
    const hasVerdicts = events.some((e) => e.choices.some((choice) => 'content_filter_results' in choice));

    for (const adapter of [azureOpenAIAdapter, azureAIAdapter]) {
      const req = azureRequest(
        adapter.id as 'azure-openai',
        { model: 'm', messages: [], stream: true, stream_options: { include_usage: true } },
        { strict },
      );
      const translator = createStreamTranslator(adapter, req);
      const outputs: StreamOutput[] = [];
      for (const event of events) {
        outputs.push(...translator.push({ kind: 'sse', event: undefined, data: JSON.stringify(event) }));
      }
      outputs.push(
        ...translator.push({ kind: 'sse', event: undefined, data: '[DONE]' }),
        ...translator.end(),
      );

      expect(outputs.at(-1)).toEqual({ type: 'done' });
      expect(translator.finished()).toBe(true);
      const chunks = outputs
        .filter((o) => o.type === 'chunk')
        .map((o) => (o as { chunk: ChatCompletionChunk }).chunk);
      expect(chunks).toHaveLength(expectedChunks);
      for (const chunk of chunks) {
        expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
        if (strict) {
          expect(chunk).not.toHaveProperty('prompt_filter_results');
          for (const choice of chunk.choices) expect(choice).not.toHaveProperty('content_filter_results');
        }
      }
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(expectedText);
      const thinking = chunks
        .flatMap((c) => c.choices[0]?.delta.content_blocks ?? [])
        .map((block) => block.delta.thinking)
        .join('');
      expect(thinking).toBe(strict ? '' : expectedThinking);
      expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual(expectedFinish);

      const last = chunks.at(-1)!;
      expect(last.choices).toEqual([]);
      for (const usage of [last.usage!, translator.usage()!]) {
        expect([usage.prompt_tokens, usage.completion_tokens, usage.total_tokens]).toEqual([
          recordedUsage.prompt_tokens,
          recordedUsage.completion_tokens,
          recordedUsage.total_tokens,
        ]);
        expect(usage.completion_tokens_details?.reasoning_tokens).toBe(expectedReasoning);
      }
      const keptVerdicts = chunks.some((c) => c.choices.some((choice) => 'content_filter_results' in choice));
      expect(keptVerdicts).toBe(!strict && hasVerdicts);
    }
  });
});

describe('Azure stream oddities', () => {
  it('turns an error object inside a 200 stream into an error event', () => {
    const translator = createStreamTranslator(
      azureOpenAIAdapter,
      azureRequest('azure-openai', { model: 'm', messages: [], stream: true }),
    );
    const [out] = translator.push({
      kind: 'sse',
      event: undefined,
      data: JSON.stringify({ error: { code: '500', message: 'The server had an error.', status: 500 } }),
    });
    expect(out!.type).toBe('error');
    expect((out as Extract<StreamOutput, { type: 'error' }>).error.status).toBe(500);
  });

  it('offers reasoning_content as a thinking block outside strict mode, and drops it in strict mode', () => {
    const chunk = {
      id: 'c1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'DeepSeek-R1',
      choices: [{ index: 0, delta: { reasoning_content: 'Let me think.' }, finish_reason: null }],
    };
    for (const strict of [false, true]) {
      const translator = createStreamTranslator(
        azureAIAdapter,
        azureRequest('azure-ai', { model: 'm', messages: [], stream: true }, { strict }),
      );
      const [out] = translator.push({ kind: 'sse', event: undefined, data: JSON.stringify(chunk) });
      const delta = (out as { chunk: ChatCompletionChunk }).chunk.choices[0]!.delta;
      expectOpenAPIValid('CreateChatCompletionStreamResponse', (out as { chunk: ChatCompletionChunk }).chunk);
      expect(delta).not.toHaveProperty('reasoning_content');
      expect(delta.content_blocks).toEqual(
        strict ? undefined : [{ index: 0, delta: { type: 'thinking', thinking: 'Let me think.' } }],
      );
    }
  });

  it('drops content-filter annotation events in strict mode, and sends them as chunks of the stream outside it', () => {
    const verdicts = { hate: { filtered: false, severity: 'safe' } };
    const annotation = {
      id: '',
      object: '',
      created: 0,
      model: '',
      choices: [
        {
          index: 0,
          finish_reason: null,
          content_filter_results: verdicts,
          content_filter_offsets: { check_offset: 0, start_offset: 0, end_offset: 5 },
        },
      ],
      usage: null,
    };
    const chunk = {
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model: 'gpt-4o-2024-08-06',
      choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: null, logprobs: null }],
    };
    for (const strict of [true, false]) {
      const translator = createStreamTranslator(
        azureOpenAIAdapter,
        azureRequest('azure-openai', { model: 'm', messages: [], stream: true }, { strict }),
      );
      const chunks = [chunk, annotation, annotation]
        .flatMap((event) => translator.push({ kind: 'sse', event: undefined, data: JSON.stringify(event) }))
        .map((out) => (out as { chunk: ChatCompletionChunk }).chunk);
      expect(chunks).toHaveLength(strict ? 1 : 3);
      for (const out of chunks) expectOpenAPIValid('CreateChatCompletionStreamResponse', out);
      if (!strict) {
        expect(chunks[1]).toMatchObject({
          id: 'chatcmpl-1',
          model: 'gpt-4o-2024-08-06',
          created: 1700000000,
        });
        expect(chunks[1]!.choices[0]).toMatchObject({ delta: {}, content_filter_results: verdicts });
      }
    }
  });
});
