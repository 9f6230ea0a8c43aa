import { describe, expect, it } from 'vitest';
import { cohereAdapter } from '../../../src/providers/cohere/index.js';
import type { ChatCompletionChunk } from '../../../src/core/openai-types.js';
import type { StreamOutput } from '../../../src/providers/types.js';
import { listCohereStreams, readCohereChunks } from '../../fakes/cohere/fixtures.js';
import { expectOpenAPIValid } from '../../helpers/openapi.js';
import { cohereRequest } from './helpers.js';
import { createStreamTranslator } from '../operations.js';

// Every recorded stream is replayed; none is skipped.
const SKIPPED: string[] = [];

interface Expected {
  text: string;
  thinking: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  usage: { prompt: number; completion: number };
  finish: string;
}

// Recorded events are read as loose JSON, the way they are written on the wire.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type LooseJson = any;

/** What the recorded events say, read straight from Cohere's wire shape. */
function expectedFrom(events: Array<Record<string, LooseJson>>): Expected {
  const out: Expected = {
    text: '',
    thinking: '',
    toolCalls: [],
    usage: { prompt: 0, completion: 0 },
    finish: '',
  };
  const finishes: Record<string, string> = {
    COMPLETE: 'stop',
    MAX_TOKENS: 'length',
    TOOL_CALL: 'tool_calls',
  };
  for (const event of events) {
    const message = event.delta?.message;
    if (event.type === 'content-delta' && typeof message.content.text === 'string')
      out.text += message.content.text;
    if (event.type === 'content-delta' && typeof message.content.thinking === 'string') {
      out.thinking += message.content.thinking;
    }
    if (event.type === 'tool-plan-delta') out.thinking += message.tool_plan;
    if (event.type === 'tool-call-start') {
      const call = message.tool_calls;
      out.toolCalls.push({ id: call.id, name: call.function.name, arguments: call.function.arguments });
    }
    if (event.type === 'tool-call-delta')
      out.toolCalls[event.index].arguments += message.tool_calls.function.arguments;
    if (event.type === 'message-end') {
      out.finish = finishes[event.delta.finish_reason];
      // What is billed, not the template's tokens the model saw.
      out.usage = {
        prompt: event.delta.usage.billed_units.input_tokens,
        completion: event.delta.usage.billed_units.output_tokens,
      };
    }
  }
  // A call without parameters streams no arguments; the gateway gives clients an empty object.
  for (const call of out.toolCalls) if (call.arguments === '') call.arguments = '{}';
  return out;
}

function replay(name: string, strict: boolean): StreamOutput[] {
  const req = cohereRequest(
    { model: 'command-a-03-2025', messages: [], stream: true, stream_options: { include_usage: true } },
    { strict },
  );
  const translator = createStreamTranslator(cohereAdapter, req);
  const outputs: StreamOutput[] = [];
  for (const event of readCohereChunks(name)) {
    outputs.push(...translator.push({ kind: 'sse', event: String(event.type), data: JSON.stringify(event) }));
  }
  outputs.push(...translator.end());
  expect(translator.finished()).toBe(true);
  return outputs;
}

describe('Cohere stream translation over every recorded stream', () => {
  it.each(listCohereStreams().filter((name) => !SKIPPED.includes(name)))('%s', (name) => {
    const expected = expectedFrom(readCohereChunks(name));
    const outputs = replay(name, false);

    expect(outputs.at(-1)).toEqual({ type: 'done' });
    const chunks = outputs
      .filter((o) => o.type === 'chunk')
      .map((o) => (o as { chunk: ChatCompletionChunk }).chunk);
    expect(outputs.filter((o) => o.type !== 'chunk' && o.type !== 'done')).toEqual([]);
    for (const chunk of chunks) expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);

    let text = '';
    let thinking = '';
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    const finishes: string[] = [];
    for (const chunk of chunks.slice(0, -1)) {
      expect(chunk.usage ?? null).toBeNull();
      const choice = chunk.choices[0]!;
      text += choice.delta.content ?? '';
      for (const block of choice.delta.content_blocks ?? []) thinking += block.delta.thinking ?? '';
      for (const call of choice.delta.tool_calls ?? []) {
        calls[call.index] ??= { id: '', name: '', arguments: '' };
        if (call.id) calls[call.index]!.id = call.id;
        if (call.function?.name) calls[call.index]!.name = call.function.name;
        calls[call.index]!.arguments += call.function?.arguments ?? '';
      }
      if (choice.finish_reason) finishes.push(choice.finish_reason);
    }
    expect(text).toBe(expected.text);
    expect(thinking).toBe(expected.thinking);
    expect(calls).toEqual(expected.toolCalls);
    expect(finishes).toEqual([expected.finish]);

    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({
      prompt_tokens: expected.usage.prompt,
      completion_tokens: expected.usage.completion,
      total_tokens: expected.usage.prompt + expected.usage.completion,
    });
  });

  it.each(listCohereStreams())('%s in strict mode carries no content_blocks', (name) => {
    const chunks = replay(name, true).filter((o) => o.type === 'chunk');
    for (const output of chunks) {
      const chunk = (output as { chunk: ChatCompletionChunk }).chunk;
      expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
      for (const choice of chunk.choices) expect(choice.delta.content_blocks).toBeUndefined();
    }
  });
});

describe('Cohere stream errors and oddities', () => {
  const req = cohereRequest({ model: 'command-a-03-2025', messages: [], stream: true });

  it('turns a message-end with finish_reason ERROR into an error event', () => {
    const translator = createStreamTranslator(cohereAdapter, req);
    const events = readCohereChunks('cohere-text').slice(0, 3);
    const outputs = events.flatMap((e) =>
      translator.push({ kind: 'sse', event: String(e.type), data: JSON.stringify(e) }),
    );
    expect(outputs.every((o) => o.type === 'chunk')).toBe(true);
    const end = translator.push({
      kind: 'sse',
      event: 'message-end',
      data: JSON.stringify({
        type: 'message-end',
        delta: { finish_reason: 'ERROR', error: 'model overloaded' },
      }),
    });
    expect(end).toHaveLength(1);
    expect(end[0]!.type).toBe('error');
    const error = (end[0] as Extract<StreamOutput, { type: 'error' }>).error;
    expect(error.status).toBe(500);
    expect(error.message).toBe('model overloaded');
    expect(translator.finished()).toBe(false);
  });

  it('reports a TIMEOUT finish as a 504', () => {
    const translator = createStreamTranslator(cohereAdapter, req);
    const [out] = translator.push({
      kind: 'sse',
      event: 'message-end',
      data: JSON.stringify({ type: 'message-end', delta: { finish_reason: 'TIMEOUT' } }),
    });
    expect(out!.type).toBe('error');
    expect((out as Extract<StreamOutput, { type: 'error' }>).error.status).toBe(504);
  });

  it('marks a payload that is not JSON as malformed and goes on', () => {
    const translator = createStreamTranslator(cohereAdapter, req);
    expect(translator.push({ kind: 'sse', event: undefined, data: '{"type":' })[0]!.type).toBe('malformed');
    const next = readCohereChunks('cohere-text')[0]!;
    expect(
      translator.push({ kind: 'sse', event: 'message-start', data: JSON.stringify(next) })[0]!.type,
    ).toBe('chunk');
  });

  it('sends no usage chunk without stream_options.include_usage but still keeps the usage for the log', () => {
    const translator = createStreamTranslator(cohereAdapter, req);
    const outputs = readCohereChunks('cohere-text').flatMap((e) =>
      translator.push({ kind: 'sse', event: String(e.type), data: JSON.stringify(e) }),
    );
    const chunks = outputs.filter((o) => o.type === 'chunk') as Array<{ chunk: ChatCompletionChunk }>;
    expect(chunks.every((c) => c.chunk.choices.length === 1 && c.chunk.usage === undefined)).toBe(true);
    expect(translator.usage()).toEqual({
      prompt_tokens: 12,
      completion_tokens: 7,
      total_tokens: 19,
    });
  });
});
