// Replays every recorded Anthropic stream through the adapter's SSE decoder and stream translator and
// checks the OpenAI chunk stream against what the recording itself says (computed here independently).
import { describe, expect, it } from 'vitest';
import { anthropicAdapter } from '../../../src/providers/anthropic/index.js';
import type { ChatCompletionChunk } from '../../../src/core/openai-types.js';
import { createSseDecoder } from '../../../src/providers/shared/sse-decoder.js';
import type { StreamOutput } from '../../../src/providers/types.js';
import { expectOpenAPIValid } from '../../helpers/openapi.js';
import { listStreamFixtures, readStreamFixture } from './fixtures.js';
import { chatRequest } from './helpers.js';
import { createStreamTranslator } from '../operations.js';

/** Recordings that are not one well-formed message: the adapter must fail them rather than answer. */
const MUST_FAIL: Record<string, string> = {
  // a second message_start with another id arrives while the first message is still open
  'spliced-message-start.chunks.txt': 'upstream_invalid_response',
};

/**
 * Out of scope: these recordings hold several complete responses one after the other (each with its own
 * message_start … message_stop), captured from multi-step loops of server tools (tool search, programmatic
 * tool calling). One API call never answers that way; the translator ends at the first message_stop.
 */
const SKIPPED = new Set([
  'anthropic-programmatic-tool-calling.1.chunks.txt',
  'anthropic-tool-search-bm25.1.chunks.txt',
  'anthropic-tool-search-deferred-bm25.chunks.txt',
  'anthropic-tool-search-deferred-regex.chunks.txt',
  'anthropic-tool-search-regex.1.chunks.txt',
]);

interface Truth {
  text: string;
  toolCalls: Array<{ name: string; arguments: string }>;
  usage: {
    input: number;
    output: number;
    cacheRead: number;
    cacheWrite: number;
    searches: number;
    fetches: number;
  };
}

/** Reads the recording the simple way: text deltas of text blocks, input deltas of tool_use blocks. */
function truthOf(lines: string[]): Truth {
  const kinds = new Map<number, string>();
  const truth: Truth = {
    text: '',
    toolCalls: [],
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, searches: 0, fetches: 0 },
  };
  const toolAt = new Map<number, { name: string; arguments: string }>();
  for (const line of lines) {
    const event = JSON.parse(line);
    const usage = event.type === 'message_start' ? event.message.usage : event.usage;
    if (usage && (event.type === 'message_start' || event.type === 'message_delta')) {
      if (usage.input_tokens != null) truth.usage.input = usage.input_tokens;
      if (usage.output_tokens != null) truth.usage.output = usage.output_tokens;
      if (usage.cache_read_input_tokens != null) truth.usage.cacheRead = usage.cache_read_input_tokens;
      if (usage.cache_creation_input_tokens != null)
        truth.usage.cacheWrite = usage.cache_creation_input_tokens;
      if (usage.server_tool_use) {
        truth.usage.searches = usage.server_tool_use.web_search_requests ?? 0;
        truth.usage.fetches = usage.server_tool_use.web_fetch_requests ?? 0;
      }
    }
    if (event.type === 'content_block_start') {
      kinds.set(event.index, event.content_block.type);
      if (event.content_block.type === 'text') truth.text += event.content_block.text ?? '';
      if (event.content_block.type === 'tool_use') {
        const call = { name: event.content_block.name, arguments: '' };
        toolAt.set(event.index, call);
        truth.toolCalls.push(call);
      }
    }
    if (event.type === 'content_block_delta') {
      if (kinds.get(event.index) === 'text' && event.delta.type === 'text_delta')
        truth.text += event.delta.text;
      const call = toolAt.get(event.index);
      if (call && event.delta.type === 'input_json_delta') call.arguments += event.delta.partial_json;
    }
  }
  for (const call of truth.toolCalls) if (call.arguments === '') call.arguments = '{}';
  return truth;
}

function replay(lines: string[]): StreamOutput[] {
  const req = chatRequest({ stream: true, stream_options: { include_usage: true } });
  const decoder = anthropicAdapter.createFrameDecoder?.() ?? createSseDecoder();
  const translator = createStreamTranslator(anthropicAdapter, req);
  const wire = lines.map((line) => `event: ${JSON.parse(line).type}\ndata: ${line}\n\n`).join('');
  const bytes = new TextEncoder().encode(wire);
  const out: StreamOutput[] = [];
  // feed in uneven slices so events straddle reads
  for (let i = 0; i < bytes.length; i += 97) {
    for (const event of decoder.push(bytes.subarray(i, i + 97))) out.push(...translator.push(event));
  }
  for (const event of decoder.end()) out.push(...translator.push(event));
  out.push(...translator.end());
  return out;
}

describe('anthropic recorded streams', () => {
  const fixtures = listStreamFixtures().filter((name) => !SKIPPED.has(name));
  it('finds the recordings', () => {
    expect(fixtures.length).toBeGreaterThan(10);
  });

  it.each(fixtures)('%s', (name) => {
    const lines = readStreamFixture(name);
    const outputs = replay(lines);
    const errors = outputs.filter((o) => o.type === 'error');
    if (MUST_FAIL[name]) {
      expect(errors).toHaveLength(1);
      expect(errors[0].type === 'error' && errors[0].error.code).toBe(MUST_FAIL[name]);
      expect(errors[0].type === 'error' && errors[0].error.status).toBe(502);
      return;
    }
    expect(errors).toEqual([]);
    expect(outputs.filter((o) => o.type === 'malformed')).toEqual([]);
    expect(outputs[outputs.length - 1]).toEqual({ type: 'done' });

    const chunks = outputs.flatMap((o) => (o.type === 'chunk' ? [o.chunk as ChatCompletionChunk] : []));
    for (const chunk of chunks) expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);

    const truth = truthOf(lines);
    let text = '';
    const calls: Array<{ id?: string; name: string; arguments: string }> = [];
    for (const chunk of chunks.slice(0, -1)) {
      expect(chunk.usage ?? null).toBeNull();
      const delta = chunk.choices[0].delta;
      text += delta.content ?? '';
      for (const call of delta.tool_calls ?? []) {
        if (call.id !== undefined) {
          expect(call.index).toBe(calls.length);
          calls.push({ id: call.id, name: call.function?.name ?? '', arguments: '' });
        } else expect(call.index).toBeLessThan(calls.length);
        calls[call.index].arguments += call.function?.arguments ?? '';
      }
    }
    expect(text).toBe(truth.text);
    expect(calls.map(({ name, arguments: args }) => ({ name, arguments: args }))).toEqual(truth.toolCalls);
    for (const call of calls) expect(() => JSON.parse(call.arguments)).not.toThrow();

    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    if (truth.toolCalls.length > 0) expect(finish[0].choices[0].finish_reason).toBe('tool_calls');

    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    const prompt = truth.usage.input + truth.usage.cacheRead + truth.usage.cacheWrite;
    expect(last.usage).toEqual({
      prompt_tokens: prompt,
      completion_tokens: truth.usage.output,
      total_tokens: prompt + truth.usage.output,
      prompt_tokens_details:
        truth.usage.cacheWrite > 0
          ? { cached_tokens: truth.usage.cacheRead, cache_write_tokens: truth.usage.cacheWrite }
          : { cached_tokens: truth.usage.cacheRead },
      ...((truth.usage.searches > 0 || truth.usage.fetches > 0) && {
        server_tool_use: {
          ...(truth.usage.searches > 0 && { web_search_requests: truth.usage.searches }),
          ...(truth.usage.fetches > 0 && { web_fetch_requests: truth.usage.fetches }),
        },
      }),
    });
  });
});

describe('anthropic streamed thinking', () => {
  it("reports the thinking tokens of message_delta's usage as reasoning tokens", () => {
    // The recording names 0 of them; a thinking answer names its count there the same way.
    const lines = readStreamFixture('anthropic-code-execution-20260120-prompt-cache.1.chunks.txt').map(
      (line) => {
        const event = JSON.parse(line);
        if (event.type === 'message_delta') event.usage.output_tokens_details = { thinking_tokens: 57 };
        return JSON.stringify(event);
      },
    );
    const usage = replay(lines)
      .flatMap((o) => (o.type === 'chunk' ? [(o.chunk as ChatCompletionChunk).usage] : []))
      .find((u) => u);
    expect(usage).toMatchObject({
      completion_tokens: 198,
      completion_tokens_details: { reasoning_tokens: 57 },
    });
  });

  function chunksOf(name: string, strictCompat: boolean): ChatCompletionChunk[] {
    const translator = createStreamTranslator(
      anthropicAdapter,
      chatRequest({ stream: true }, { strictCompat }),
    );
    return readStreamFixture(name)
      .flatMap((data) => translator.push({ kind: 'sse', event: undefined, data }))
      .flatMap((o) => (o.type === 'chunk' ? [o.chunk as ChatCompletionChunk] : []));
  }

  it('streams thinking and its signature in content_blocks, and leaves them out when strict', () => {
    const lines = readStreamFixture('anthropic-clear-thinking.1.chunks.txt').map((l) => JSON.parse(l));
    const thinking = lines
      .filter((e) => e.type === 'content_block_delta' && e.delta.type === 'thinking_delta')
      .map((e) => e.delta.thinking)
      .join('');
    const signature = lines.find((e) => e.delta?.type === 'signature_delta').delta.signature;
    const blocks = chunksOf('anthropic-clear-thinking.1.chunks.txt', false).flatMap(
      (c) => c.choices[0]?.delta.content_blocks ?? [],
    );
    expect(blocks.map((b) => b.delta.thinking ?? '').join('')).toBe(thinking);
    expect(blocks.map((b) => b.delta.signature ?? '').join('')).toBe(signature);
    expect(blocks.every((b) => b.index === 0 && b.delta.type === 'thinking')).toBe(true);
    const strict = chunksOf('anthropic-clear-thinking.1.chunks.txt', true);
    expect(strict.some((c) => c.choices[0]?.delta.content_blocks)).toBe(false);
  });
});

describe('anthropic streamed refusal', () => {
  it('says why in delta.refusal before the content_filter finish, as a whole answer says it in refusal', () => {
    const translator = createStreamTranslator(anthropicAdapter, chatRequest({ stream: true }));
    const chunks = readStreamFixture('anthropic-refusal.chunks.txt')
      .flatMap((data) => translator.push({ kind: 'sse', event: undefined, data }))
      .flatMap((o) => (o.type === 'chunk' ? [o.chunk as ChatCompletionChunk] : []));
    for (const chunk of chunks) expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
    const refusal = chunks.map((c) => c.choices[0]?.delta.refusal ?? '').join('');
    expect(refusal).toMatch(/^This request triggered restrictions on violative cyber content/);
    const finishAt = chunks.findIndex((c) => c.choices[0]?.finish_reason);
    expect(chunks[finishAt].choices[0].finish_reason).toBe('content_filter');
    expect(chunks.findIndex((c) => c.choices[0]?.delta.refusal)).toBeLessThan(finishAt);
  });
});
