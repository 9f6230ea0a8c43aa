import { ProviderError } from '../../gateway/errors.js';
import type { ChatCompletionChunk, ChatRequest, FinishReason, Usage } from '../openai-types.js';
import type { AdapterRequest, StreamOutput, StreamTranslator, UpstreamEvent } from '../types.js';
import { choiceChunk, unixSeconds, usageChunk, type ChunkIdentity } from '../shared/chat-chunks.js';
import type { BedrockStreamPayloads, BedrockUsage } from './bedrock-api-types.js';
import { JSON_RESPONSE_TOOL_NAME } from './bedrock-config.js';
import { usesJsonResponseTool } from '../shared/chat-request-fields.js';
import { bedrockStreamException } from './bedrock-error.js';
import { newChatCompletionId } from './bedrock-response.js';
import { toOpenAIUsage } from './bedrock-usage.js';
import { mapBedrockFinishReason } from './map-bedrock-finish-reason.js';

type Delta = ChatCompletionChunk['choices'][number]['delta'];
type BlockState =
  { kind: 'tool'; toolIndex: number; sentArguments: boolean } | { kind: 'json'; sentText: boolean };

/**
 * ConverseStream events → OpenAI chunks. Text blocks have no start event, tool blocks do; tool indexes
 * count tool blocks only. `messageStop` gives the finish reason, `metadata` the usage; the two come in
 * either order, and the answer is done once both are seen. Exceptions in the stream become errors.
 */
export function createBedrockStreamTranslator(req: AdapterRequest, provider = 'bedrock'): StreamTranslator {
  const body = req.body as ChatRequest;
  const includeUsage = body.stream_options?.include_usage === true;
  const jsonMode = usesJsonResponseTool(req.body);
  const identity: ChunkIdentity = {
    id: newChatCompletionId(),
    model: String(body.model ?? ''),
    created: unixSeconds(),
  };
  const blocks = new Map<number, BlockState>();
  let started = false;
  let toolCount = 0;
  let usage: BedrockUsage | undefined;
  let finishReason: FinishReason | undefined;
  let usageSent = false;
  let done = false;
  let failed = false;

  const chunk = (delta: Delta, finish: FinishReason | null = null): StreamOutput => ({
    type: 'chunk',
    chunk: choiceChunk(identity, delta, finish),
  });
  /** The role chunk opens the answer, also for streams that send no messageStart. */
  const open = (): StreamOutput[] => {
    if (started) return [];
    started = true;
    return [chunk({ role: 'assistant', content: '' })];
  };
  const closing = (): StreamOutput[] => {
    if (!includeUsage || usageSent || finishReason === undefined || usage === undefined) return [];
    usageSent = true;
    return [{ type: 'chunk', chunk: usageChunk(identity, toOpenAIUsage(usage)) }];
  };
  const complete = (): StreamOutput[] => {
    if (finishReason === undefined || usage === undefined) return [];
    done = true;
    return [...closing(), { type: 'done' }];
  };

  const onEvent = (type: string, payload: unknown): StreamOutput[] => {
    switch (type) {
      case 'messageStart':
        return open();
      case 'contentBlockStart': {
        const event = payload as BedrockStreamPayloads['contentBlockStart'];
        const tool = event.start?.toolUse;
        if (!tool) return open();
        if (jsonMode && tool.name === JSON_RESPONSE_TOOL_NAME) {
          blocks.set(event.contentBlockIndex, { kind: 'json', sentText: false });
          return open();
        }
        const toolIndex = toolCount++;
        blocks.set(event.contentBlockIndex, { kind: 'tool', toolIndex, sentArguments: false });
        return [
          ...open(),
          chunk({
            tool_calls: [
              {
                index: toolIndex,
                id: tool.toolUseId,
                type: 'function',
                function: { name: tool.name, arguments: '' },
              },
            ],
          }),
        ];
      }
      case 'contentBlockDelta': {
        const event = payload as BedrockStreamPayloads['contentBlockDelta'];
        const out = open();
        const delta = event.delta ?? {};
        const state = blocks.get(event.contentBlockIndex);
        if (typeof delta.text === 'string' && delta.text !== '') out.push(chunk({ content: delta.text }));
        if (delta.toolUse && delta.toolUse.input !== '') {
          if (state?.kind === 'tool') {
            state.sentArguments = true;
            out.push(
              chunk({
                tool_calls: [{ index: state.toolIndex, function: { arguments: delta.toolUse.input } }],
              }),
            );
          } else if (state?.kind === 'json') {
            state.sentText = true;
            out.push(chunk({ content: delta.toolUse.input }));
          }
        }
        const reasoning = delta.reasoningContent;
        if (reasoning && !req.strictCompat) {
          const index = event.contentBlockIndex;
          if (reasoning.text)
            out.push(
              chunk({ content_blocks: [{ index, delta: { type: 'thinking', thinking: reasoning.text } }] }),
            );
          if (reasoning.signature) {
            out.push(
              chunk({
                content_blocks: [{ index, delta: { type: 'thinking', signature: reasoning.signature } }],
              }),
            );
          }
          if (reasoning.redactedContent) {
            out.push(
              chunk({
                content_blocks: [
                  { index, delta: { type: 'redacted_thinking', data: reasoning.redactedContent } },
                ],
              }),
            );
          }
        }
        return out;
      }
      case 'contentBlockStop': {
        const state = blocks.get((payload as BedrockStreamPayloads['contentBlockStop']).contentBlockIndex);
        // A call without arguments streams an empty input; `{}` keeps the concatenation valid JSON.
        if (state?.kind === 'tool' && !state.sentArguments) {
          state.sentArguments = true;
          return [chunk({ tool_calls: [{ index: state.toolIndex, function: { arguments: '{}' } }] })];
        }
        if (state?.kind === 'json' && !state.sentText) {
          state.sentText = true;
          return [chunk({ content: '{}' })];
        }
        return [];
      }
      case 'messageStop': {
        const event = payload as BedrockStreamPayloads['messageStop'];
        let reason = mapBedrockFinishReason(event.stopReason);
        if (jsonMode && reason === 'tool_calls' && toolCount === 0) reason = 'stop';
        finishReason = reason;
        return [...open(), chunk({}, reason), ...complete()];
      }
      case 'metadata':
        usage = (payload as BedrockStreamPayloads['metadata']).usage ?? {};
        return complete();
      default:
        return [];
    }
  };

  return {
    push(event: UpstreamEvent): StreamOutput[] {
      if (failed || done) return [];
      if (event.kind !== 'message')
        return [{ type: 'malformed', detail: 'expected an event-stream message' }];
      const messageType = event.headers[':message-type'];
      if (messageType === 'exception') {
        failed = true;
        const name = event.headers[':exception-type'] ?? 'unknownException';
        return [{ type: 'error', error: bedrockStreamException(provider, name, event.payload) }];
      }
      if (messageType === 'error') {
        failed = true;
        const code = event.headers[':error-code'] ?? 'InternalServerException';
        const error = new ProviderError({
          status: 500,
          provider,
          message: event.headers[':error-message'] ?? `${provider} stream error ${code}`,
          code,
        });
        return [{ type: 'error', error }];
      }
      if (typeof event.payload !== 'object' || event.payload === null) {
        return [{ type: 'malformed', detail: `payload is not JSON: ${String(event.payload).slice(0, 200)}` }];
      }
      return onEvent(event.headers[':event-type'] ?? '', event.payload);
    },
    end(): StreamOutput[] {
      if (failed || done) return [];
      return closing();
    },
    usage(): Usage | undefined {
      return usage ? toOpenAIUsage(usage) : undefined;
    },
    finished(): boolean {
      return finishReason !== undefined;
    },
  };
}
