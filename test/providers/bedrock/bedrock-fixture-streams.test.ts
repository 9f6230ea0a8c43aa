// Replays every recorded ConverseStream as real binary event-stream frames through the adapter's decoder
// and translator, and checks the OpenAI chunk stream against the recording (read independently here).
import { describe, expect, it } from 'vitest';
import { bedrockAdapter } from '../../../src/providers/bedrock/index.js';
import type { ChatCompletionChunk } from '../../../src/core/openai-types.js';
import type { StreamOutput } from '../../../src/providers/types.js';
import { expectOpenAPIValid } from '../../helpers/openapi.js';
import { encodeEvent, encodeException, parseChunkLine } from '../../fakes/bedrock/event-stream.js';
import { listBedrockStreamFixtures, readBedrockStreamFixture } from '../../fakes/bedrock/fixtures.js';
import { bedrockRequest } from './helpers.js';
import { createStreamTranslator } from '../operations.js';

interface Truth {
  text: string;
  toolCalls: Array<{ name: string; arguments: string }>;
  usage?: { inputTokens: number; outputTokens: number; cacheReadInputTokens?: number };
  stopReason?: string;
}

function truthOf(lines: string[]): Truth {
  const truth: Truth = { text: '', toolCalls: [] };
  const toolAt = new Map<number, { name: string; arguments: string }>();
  for (const line of lines) {
    const { eventType, payload } = parseChunkLine(line) as { eventType: string; payload: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
    if (eventType === 'contentBlockStart' && payload.start?.toolUse) {
      const call = { name: payload.start.toolUse.name, arguments: '' };
      toolAt.set(payload.contentBlockIndex, call);
      truth.toolCalls.push(call);
    }
    if (eventType === 'contentBlockDelta') {
      if (typeof payload.delta.text === 'string') truth.text += payload.delta.text;
      if (payload.delta.toolUse)
        toolAt.get(payload.contentBlockIndex)!.arguments += payload.delta.toolUse.input;
    }
    if (eventType === 'metadata') truth.usage = payload.usage;
    if (eventType === 'messageStop') truth.stopReason = payload.stopReason;
  }
  for (const call of truth.toolCalls) if (call.arguments === '') call.arguments = '{}';
  return truth;
}

function frames(lines: string[]): Uint8Array {
  const parts = lines.map((line) => {
    const { eventType, payload } = parseChunkLine(line);
    return encodeEvent(eventType, payload);
  });
  return Buffer.concat(parts);
}

function replay(bytes: Uint8Array, slice = 61): StreamOutput[] {
  const req = bedrockRequest({ stream: true, stream_options: { include_usage: true } });
  const decoder = bedrockAdapter.createFrameDecoder!();
  const translator = createStreamTranslator(bedrockAdapter, req);
  const out: StreamOutput[] = [];
  for (let i = 0; i < bytes.length; i += slice) {
    for (const event of decoder.push(bytes.subarray(i, i + slice))) out.push(...translator.push(event));
  }
  for (const event of decoder.end()) out.push(...translator.push(event));
  out.push(...translator.end());
  return out;
}

describe('bedrock recorded streams', () => {
  const fixtures = listBedrockStreamFixtures();
  it('finds the recordings', () => expect(fixtures.length).toBeGreaterThan(5));

  it.each(fixtures)('%s', (name) => {
    const lines = readBedrockStreamFixture(name);
    const outputs = replay(frames(lines));
    expect(outputs.filter((o) => o.type === 'error' || o.type === 'malformed')).toEqual([]);
    const truth = truthOf(lines);

    const chunks = outputs.flatMap((o) => (o.type === 'chunk' ? [o.chunk as ChatCompletionChunk] : []));
    for (const chunk of chunks) expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');

    let text = '';
    const calls: Array<{ name: string; arguments: string }> = [];
    for (const chunk of chunks) {
      if (chunk.choices.length === 0) continue;
      expect(chunk.usage ?? null).toBeNull();
      const delta = chunk.choices[0].delta;
      text += delta.content ?? '';
      for (const call of delta.tool_calls ?? []) {
        if (call.id !== undefined) {
          expect(call.index).toBe(calls.length);
          calls.push({ name: call.function?.name ?? '', arguments: '' });
        } else expect(call.index).toBeLessThan(calls.length);
        calls[call.index].arguments += call.function?.arguments ?? '';
      }
    }
    expect(text).toBe(truth.text);
    expect(calls).toEqual(truth.toolCalls);
    for (const call of calls) expect(() => JSON.parse(call.arguments)).not.toThrow();

    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    expect(finish[0].choices[0].finish_reason).toBe(truth.stopReason === 'tool_use' ? 'tool_calls' : 'stop');

    const usageChunks = chunks.filter((c) => c.choices.length === 0);
    if (truth.usage) {
      expect(outputs[outputs.length - 1]).toEqual({ type: 'done' });
      expect(usageChunks).toHaveLength(1);
      expect(usageChunks[0]).toBe(chunks[chunks.length - 1]);
      const cached = truth.usage.cacheReadInputTokens ?? 0;
      expect(usageChunks[0].usage).toEqual({
        prompt_tokens: truth.usage.inputTokens + cached,
        completion_tokens: truth.usage.outputTokens,
        total_tokens: truth.usage.inputTokens + cached + truth.usage.outputTokens,
        prompt_tokens_details: { cached_tokens: cached },
      });
    } else {
      // no metadata event recorded: the answer is complete (finished) but has no usage to report
      expect(usageChunks).toHaveLength(0);
    }
  });

  it('puts reasoning in content_blocks with its signature', () => {
    const lines = readBedrockStreamFixture('amazon-bedrock-reasoning.chunks.txt');
    const chunks = replay(frames(lines)).flatMap((o) =>
      o.type === 'chunk' ? [o.chunk as ChatCompletionChunk] : [],
    );
    const blocks = chunks.flatMap((c) => c.choices[0]?.delta.content_blocks ?? []);
    const thinking = blocks.map((b) => b.delta.thinking ?? '').join('');
    expect(thinking).toMatch(/^Let me count the r's in "strawberry"/);
    expect(blocks.some((b) => (b.delta.signature ?? '').startsWith('Ep0CCkgICxAB'))).toBe(true);
    expect(blocks.every((b) => b.index === 0)).toBe(true);
  });

  it.each([
    ['throttlingException', 429],
    ['modelStreamErrorException', 424],
    ['internalServerException', 500],
    ['serviceUnavailableException', 503],
  ])('turns a %s inside the stream into a %i error', (type, status) => {
    const lines = readBedrockStreamFixture('amazon-bedrock-text.chunks.txt').slice(0, 3);
    const bytes = Buffer.concat([frames(lines), encodeException(type, 'Too many requests, please wait.')]);
    const outputs = replay(bytes);
    const errors = outputs.filter((o) => o.type === 'error');
    expect(errors).toHaveLength(1);
    if (errors[0].type === 'error') {
      expect(errors[0].error.status).toBe(status);
      expect(errors[0].error.code).toBe(type);
      expect(errors[0].error.message).toBe('Too many requests, please wait.');
    }
    expect(outputs.some((o) => o.type === 'done')).toBe(false);
  });

  it('drops a frame cut in the middle', () => {
    const lines = readBedrockStreamFixture('amazon-bedrock-text.chunks.txt');
    const bytes = frames(lines);
    const outputs = replay(bytes.subarray(0, bytes.length - 10));
    expect(outputs.some((o) => o.type === 'done')).toBe(false);
  });
});
