/**
 * Cohere v2 chat stream → OpenAI chat completion chunks.
 *
 * message-start → role chunk; content-delta → content (text) or content_blocks (thinking, non-strict
 * only); tool-plan-delta → a thinking content block (non-strict only); tool-call-start/-delta → tool_call
 * deltas indexed in order of appearance; message-end → finish chunk, then the usage chunk when asked for.
 * A message-end with finish_reason ERROR/TIMEOUT is an error inside the 200 stream.
 */
import type { ChatCompletionChunk, ContentBlock, Usage } from '../../core/openai-types.js';
import type { AdapterRequest, StreamOutput, StreamTranslator, UpstreamEvent } from '../types.js';
import type { CohereStreamEvent } from './cohere-api-types.js';
import { cohereStreamError } from './cohere-error.js';
import { convertCohereUsage } from './convert-cohere-usage.js';
import { mapCohereFinishReason } from './map-cohere-finish-reason.js';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

export function createCohereStreamTranslator(req: AdapterRequest<'chat'>): StreamTranslator {
  const body = req.body;
  const includeUsage = body.stream_options?.include_usage === true;
  const model = String(body.model ?? '');
  const created = Math.floor(Date.now() / 1000);
  let id = '';
  let usage: Usage | undefined;
  let finished = false;
  let ended = false;

  // Cohere numbers content blocks and tool calls separately; OpenAI wants one index space for each.
  const blockIndex = new Map<string, number>();
  const toolIndex = new Map<number, number>();
  const toolArguments = new Map<number, string>();

  const chunk = (
    delta: Delta,
    finishReason: ChatCompletionChunk['choices'][number]['finish_reason'] = null,
  ) => {
    const value: ChatCompletionChunk = {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    };
    return { type: 'chunk', chunk: value } as const;
  };
  const blockIndexFor = (key: string): number => {
    let index = blockIndex.get(key);
    if (index === undefined) {
      index = blockIndex.size;
      blockIndex.set(key, index);
    }
    return index;
  };
  const thinkingChunk = (key: string, thinking: string) => {
    const block: ContentBlock = { type: 'thinking', thinking };
    return chunk({ content_blocks: [{ index: blockIndexFor(key), delta: block }] });
  };

  function translate(event: CohereStreamEvent): StreamOutput[] {
    const message = event.delta?.message;
    switch (event.type) {
      case 'message-start':
        if (event.id) id = event.id;
        return [chunk({ role: 'assistant', content: '' })];
      case 'content-start': {
        const kind = message?.content?.type === 'thinking' ? 'thinking' : 'text';
        blockIndexFor(`content:${event.index ?? 0}`);
        const first = kind === 'thinking' ? message?.content?.thinking : message?.content?.text;
        return first ? contentDelta(event.index ?? 0, kind, first) : [];
      }
      case 'content-delta': {
        const content = message?.content;
        if (!content) return [];
        if (typeof content.thinking === 'string')
          return contentDelta(event.index ?? 0, 'thinking', content.thinking);
        if (typeof content.text === 'string') return contentDelta(event.index ?? 0, 'text', content.text);
        return [];
      }
      case 'tool-plan-delta': {
        const plan = message?.tool_plan;
        return plan && !req.strictCompat ? [thinkingChunk('tool-plan', plan)] : [];
      }
      case 'tool-call-start': {
        const call = message?.tool_calls;
        const cohereIndex = event.index ?? toolIndex.size;
        const index = toolIndex.size;
        toolIndex.set(cohereIndex, index);
        const args = call?.function?.arguments ?? '';
        toolArguments.set(cohereIndex, args);
        return [
          chunk({
            tool_calls: [
              {
                index,
                id: call?.id ?? '',
                type: 'function',
                function: { name: call?.function?.name ?? '', arguments: args },
              },
            ],
          }),
        ];
      }
      case 'tool-call-delta': {
        const cohereIndex = event.index ?? 0;
        const index = toolIndex.get(cohereIndex);
        const args = message?.tool_calls?.function?.arguments;
        if (index === undefined || !args) return [];
        toolArguments.set(cohereIndex, (toolArguments.get(cohereIndex) ?? '') + args);
        return [chunk({ tool_calls: [{ index, function: { arguments: args } }] })];
      }
      case 'tool-call-end': {
        const cohereIndex = event.index ?? 0;
        const index = toolIndex.get(cohereIndex);
        // A call to a function without parameters streams no arguments at all; OpenAI clients parse them.
        if (index === undefined || (toolArguments.get(cohereIndex) ?? '').trim() !== '') return [];
        toolArguments.set(cohereIndex, '{}');
        return [chunk({ tool_calls: [{ index, function: { arguments: '{}' } }] })];
      }
      case 'message-end':
        return messageEnd(event);
      default:
        // content-end, citation-start/-end, debug: nothing to say in OpenAI's shape.
        return [];
    }
  }

  function contentDelta(cohereIndex: number, kind: 'text' | 'thinking', text: string): StreamOutput[] {
    if (kind === 'text') return [chunk({ content: text })];
    return req.strictCompat ? [] : [thinkingChunk(`content:${cohereIndex}`, text)];
  }

  function messageEnd(event: CohereStreamEvent): StreamOutput[] {
    const reason = event.delta?.finish_reason;
    usage = convertCohereUsage(event.delta?.usage) ?? usage;
    ended = true;
    const failure = cohereStreamError(event as unknown as Record<string, unknown>);
    if (failure) return [{ type: 'error', error: failure }];
    finished = true;
    const out: StreamOutput[] = [chunk({}, mapCohereFinishReason(reason) ?? 'stop')];
    if (includeUsage && usage) {
      out.push({
        type: 'chunk',
        chunk: { id, object: 'chat.completion.chunk', created, model, choices: [], usage },
      });
    }
    out.push({ type: 'done' });
    return out;
  }

  return {
    push(event: UpstreamEvent): StreamOutput[] {
      if (event.kind !== 'sse' || ended) return [];
      const data = event.data.trim();
      if (data === '') return [];
      if (data === '[DONE]') return finished ? [] : [{ type: 'done' }];
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch {
        return [{ type: 'malformed', detail: `not JSON: ${data.slice(0, 200)}` }];
      }
      if (!parsed || typeof parsed !== 'object') return [{ type: 'malformed', detail: 'not an object' }];
      const value = parsed as CohereStreamEvent & { message?: unknown };
      if (typeof value.type !== 'string') {
        // An error object written into the stream instead of an event.
        const failure = cohereStreamError(parsed as Record<string, unknown>);
        if (failure) {
          ended = true;
          return [{ type: 'error', error: failure }];
        }
        return [{ type: 'malformed', detail: 'event without a type' }];
      }
      return translate(value);
    },
    end: () => [],
    usage: () => usage,
    finished: () => finished,
  };
}
