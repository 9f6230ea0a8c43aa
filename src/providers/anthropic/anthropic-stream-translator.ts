import { ProviderError } from '../../core/errors.js';
import type { ChatCompletionChunk, FinishReason, Usage } from '../../core/openai-types.js';
import type { AdapterRequest, StreamOutput, StreamTranslator, UpstreamEvent } from '../types.js';
import { createToolCallStream, type ToolBlock } from '../shared/tool-call-stream.js';
import { choiceChunk, unixSeconds, usageChunk, type ChunkIdentity } from '../shared/chat-chunks.js';
import type { AnthropicStreamEvent, AnthropicUsage } from './anthropic-api-types.js';
import { JSON_RESPONSE_TOOL_NAME } from './anthropic-config.js';
import { anthropicStreamError } from './anthropic-error.js';
import { usesJsonResponseTool } from '../shared/chat-request-fields.js';
import { mergeAnthropicUsage, toOpenAIUsage } from './anthropic-usage.js';
import { mapAnthropicFinishReason } from './map-anthropic-finish-reason.js';
import { mapAnthropicServiceTier } from './map-anthropic-service-tier.js';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

/** What one Anthropic content block turns into on the OpenAI side. */
type BlockState =
  | { kind: 'text' }
  | ToolBlock
  | { kind: 'thinking' }
  /** Server tools, fallbacks and other blocks the chat shape has no place for. */
  | { kind: 'skip' };

/**
 * Anthropic Messages SSE events → OpenAI chat chunks. A role chunk opens the answer; text, tool-call and
 * thinking deltas follow with tool indexes counted over tool blocks only; `message_delta` gives the
 * finish reason and the final usage; with `include_usage` a choice-less usage chunk precedes `done`.
 */
export function createAnthropicStreamTranslator(
  req: AdapterRequest<'chat'>,
  provider = 'anthropic',
): StreamTranslator {
  const body = req.body;
  const includeUsage = body.stream_options?.include_usage === true;
  const jsonMode = usesJsonResponseTool(req.body);
  const tools = createToolCallStream(jsonMode, JSON_RESPONSE_TOOL_NAME);
  // json_object: the forced `json` tool's input is the answer, so text is held until it is known whether the
  // tool comes (the text is then dropped, being no part of the JSON) or not (the text is the answer).
  let heldText = '';
  let jsonAnswerSeen = false;
  const text = (value: string): StreamOutput[] => {
    if (!value) return [];
    if (!jsonMode) return [chunk({ content: value })];
    if (!jsonAnswerSeen) heldText += value;
    return [];
  };
  const blocks = new Map<number, BlockState>();
  let identity: ChunkIdentity = { id: '', model: String(body.model ?? ''), created: unixSeconds() };
  let messageId: string | undefined;
  let usage: AnthropicUsage | undefined;
  let finishReason: FinishReason | undefined;
  let usageSent = false;
  let done = false;
  let failed = false;

  // Each chunk names the tier that served the call, as OpenAI's do and as a whole answer does.
  const withServiceTier = (out: ChatCompletionChunk): ChatCompletionChunk => {
    const tier = mapAnthropicServiceTier(usage?.service_tier);
    return tier ? { ...out, service_tier: tier } : out;
  };
  const chunk = (delta: Delta, finish: FinishReason | null = null): StreamOutput => ({
    type: 'chunk',
    chunk: withServiceTier(choiceChunk(identity, delta, finish)),
  });

  const closing = (): StreamOutput[] => {
    const out: StreamOutput[] = [];
    if (includeUsage && !usageSent && finishReason !== undefined) {
      usageSent = true;
      out.push({ type: 'chunk', chunk: withServiceTier(usageChunk(identity, toOpenAIUsage(usage))) });
    }
    return out;
  };

  const handle = (event: AnthropicStreamEvent): StreamOutput[] => {
    switch (event.type) {
      case 'message_start': {
        const id = event.message?.id;
        if (messageId !== undefined) {
          if (id === messageId) return []; // a repeated message_start of the open message
          failed = true;
          return [
            {
              type: 'error',
              error: new ProviderError({
                status: 502,
                provider,
                message: `${provider} started message ${String(id)} while message ${messageId} was still open`,
                code: 'upstream_invalid_response',
              }),
            },
          ];
        }
        messageId = id;
        identity = { id, model: event.message.model || identity.model, created: identity.created };
        usage = mergeAnthropicUsage(usage, event.message.usage);
        return [chunk({ role: 'assistant', content: '' })];
      }
      case 'content_block_start':
        return blockStart(event.index, event.content_block as { type: string; [key: string]: unknown });
      case 'content_block_delta':
        return blockDelta(event.index, event.delta as { type: string; [key: string]: unknown });
      case 'content_block_stop':
        return blockStop(event.index);
      case 'message_delta': {
        usage = mergeAnthropicUsage(usage, event.usage);
        if (event.delta?.stop_reason === undefined || event.delta.stop_reason === null) return [];
        finishReason = tools.finishReason(mapAnthropicFinishReason(event.delta.stop_reason));
        const held = heldText ? [chunk({ content: heldText })] : [];
        heldText = '';
        // A refusal says why in `stop_details`, as in a whole answer: OpenAI clients read it as `refusal`.
        const explanation = (event.delta as { stop_details?: { explanation?: unknown } }).stop_details
          ?.explanation;
        if (event.delta.stop_reason === 'refusal' && typeof explanation === 'string') {
          return [...held, chunk({ refusal: explanation }), chunk({}, finishReason)];
        }
        return [...held, chunk({}, finishReason)];
      }
      case 'message_stop':
        done = true;
        return [...closing(), { type: 'done' }];
      case 'error':
        failed = true;
        return [{ type: 'error', error: anthropicStreamError(provider, event.error ?? {}) }];
      default:
        return []; // ping and future event types
    }
  };

  const blockStart = (index: number, block: { type: string; [key: string]: unknown }): StreamOutput[] => {
    switch (block.type) {
      case 'text': {
        blocks.set(index, { kind: 'text' });
        return text(typeof block.text === 'string' ? block.text : '');
      }
      case 'tool_use': {
        const tool = tools.open(String(block.id), String(block.name));
        blocks.set(index, tool.block);
        if (tool.block.kind === 'json') {
          jsonAnswerSeen = true;
          heldText = '';
        }
        return tool.delta ? [chunk(tool.delta)] : [];
      }
      case 'thinking': {
        blocks.set(index, { kind: 'thinking' });
        const thinking = typeof block.thinking === 'string' ? block.thinking : '';
        return thinking && !req.strictCompat
          ? [chunk({ content_blocks: [{ index, delta: { type: 'thinking', thinking } }] })]
          : [];
      }
      case 'redacted_thinking':
        blocks.set(index, { kind: 'thinking' });
        return req.strictCompat
          ? []
          : [
              chunk({
                content_blocks: [{ index, delta: { type: 'redacted_thinking', data: String(block.data) } }],
              }),
            ];
      default:
        blocks.set(index, { kind: 'skip' });
        return [];
    }
  };

  const blockDelta = (index: number, delta: { type: string; [key: string]: unknown }): StreamOutput[] => {
    const state = blocks.get(index) ?? { kind: 'text' };
    if (delta.type === 'text_delta' && state.kind === 'text') return text(String(delta.text ?? ''));
    if (delta.type === 'input_json_delta') {
      const part = String(delta.partial_json ?? '');
      if (part === '' || (state.kind !== 'tool' && state.kind !== 'json')) return [];
      return [chunk(tools.input(state, part))];
    }
    if (state.kind === 'thinking' && !req.strictCompat) {
      if (delta.type === 'thinking_delta' && delta.thinking) {
        return [
          chunk({
            content_blocks: [{ index, delta: { type: 'thinking', thinking: String(delta.thinking) } }],
          }),
        ];
      }
      if (delta.type === 'signature_delta' && delta.signature) {
        return [
          chunk({
            content_blocks: [{ index, delta: { type: 'thinking', signature: String(delta.signature) } }],
          }),
        ];
      }
    }
    return [];
  };

  const blockStop = (index: number): StreamOutput[] => {
    const state = blocks.get(index);
    if (state?.kind !== 'tool' && state?.kind !== 'json') return [];
    const delta = tools.close(state);
    return delta ? [chunk(delta)] : [];
  };

  return {
    holdsWhole: jsonMode,
    push(event: UpstreamEvent): StreamOutput[] {
      if (failed || done) return [];
      if (event.kind !== 'sse') return [{ type: 'malformed', detail: 'expected a server-sent event' }];
      let parsed: AnthropicStreamEvent;
      try {
        parsed = JSON.parse(event.data) as AnthropicStreamEvent;
      } catch {
        return [{ type: 'malformed', detail: `not JSON: ${event.data.slice(0, 200)}` }];
      }
      if (!parsed || typeof parsed !== 'object' || typeof parsed.type !== 'string') {
        return [{ type: 'malformed', detail: `no event type: ${event.data.slice(0, 200)}` }];
      }
      return handle(parsed);
    },
    end(): StreamOutput[] {
      if (failed || done) return [];
      return closing();
    },
    usage(): Usage | undefined {
      return usage ? toOpenAIUsage(usage) : undefined;
    },
    serviceTier(): string | undefined {
      return usage?.service_tier ?? undefined;
    },
    finished(): boolean {
      return finishReason !== undefined;
    },
  };
}
