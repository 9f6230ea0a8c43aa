import type { ChatCompletionChunk, FinishReason, Usage } from '../../core/openai-types.js';
import type { AdapterRequest, StreamOutput, StreamTranslator, UpstreamEvent } from '../types.js';
import { createToolCallStream, type ToolBlock } from '../shared/tool-call-stream.js';
import { choiceChunk, unixSeconds, usageChunk, type ChunkIdentity } from '../shared/chat-chunks.js';
import type { BedrockStreamPayloads, BedrockUsage } from './bedrock-api-types.js';
import { JSON_RESPONSE_TOOL_NAME } from './bedrock-config.js';
import { usesJsonResponseTool } from '../shared/chat-request-fields.js';
import { bedrockEventFailure } from './bedrock-error.js';
import { newChatCompletionId } from './bedrock-response.js';
import { toOpenAIUsage } from './bedrock-usage.js';
import { bedrockInvalidOutput, mapBedrockFinishReason } from './map-bedrock-finish-reason.js';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

/**
 * ConverseStream events → OpenAI chunks. Text blocks have no start event, tool blocks do; tool indexes
 * count tool blocks only. `messageStop` gives the finish reason, `metadata` the usage; the two come in
 * either order, and the answer is done once both are seen. Exceptions in the stream become errors.
 */
export function createBedrockStreamTranslator(
  req: AdapterRequest<'chat'>,
  provider = 'bedrock',
): StreamTranslator {
  const body = req.body;
  const includeUsage = body.stream_options?.include_usage === true;
  const tools = createToolCallStream(usesJsonResponseTool(req.body), JSON_RESPONSE_TOOL_NAME);
  const identity: ChunkIdentity = {
    id: newChatCompletionId(),
    model: String(body.model ?? ''),
    created: unixSeconds(),
  };
  const blocks = new Map<number, ToolBlock>();
  let started = false;
  let usage: BedrockUsage | undefined;
  let finishReason: FinishReason | undefined;
  let usageSent = false;
  let done = false;
  let failed = false;
  // json_object: the forced `json` tool's input is the answer, so text is held until it is known whether the
  // tool comes (the text is then dropped, being no part of the JSON) or not (the text is the answer).
  const jsonMode = usesJsonResponseTool(req.body);
  let heldText = '';
  let jsonAnswerSeen = false;

  /** Text or a tool call went out (or is held). */
  let answered = false;

  const chunk = (delta: Delta, finish: FinishReason | null = null): StreamOutput => {
    if (delta.content || delta.tool_calls) answered = true;
    return { type: 'chunk', chunk: choiceChunk(identity, delta, finish) };
  };
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
        const { block, delta } = tools.open(tool.toolUseId, tool.name);
        blocks.set(event.contentBlockIndex, block);
        if (block.kind === 'json') {
          jsonAnswerSeen = true;
          heldText = '';
        }
        return delta ? [...open(), chunk(delta)] : open();
      }
      case 'contentBlockDelta': {
        const event = payload as BedrockStreamPayloads['contentBlockDelta'];
        const out = open();
        const delta = event.delta ?? {};
        const state = blocks.get(event.contentBlockIndex);
        if (typeof delta.text === 'string' && delta.text !== '') {
          if (!jsonMode) out.push(chunk({ content: delta.text }));
          else if (!jsonAnswerSeen) heldText += delta.text;
        }
        if (delta.toolUse && delta.toolUse.input !== '' && state) {
          out.push(chunk(tools.input(state, delta.toolUse.input)));
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
        const delta = state && tools.close(state);
        return delta ? [chunk(delta)] : [];
      }
      case 'messageStop': {
        const event = payload as BedrockStreamPayloads['messageStop'];
        const invalid = bedrockInvalidOutput(provider, event.stopReason, answered || heldText !== '');
        if (invalid) {
          failed = true;
          return [{ type: 'error', error: invalid }];
        }
        finishReason = tools.finishReason(mapBedrockFinishReason(event.stopReason));
        const held = heldText !== '' ? [chunk({ content: heldText })] : [];
        heldText = '';
        return [...open(), ...held, chunk({}, finishReason), ...complete()];
      }
      case 'metadata':
        usage = (payload as BedrockStreamPayloads['metadata']).usage ?? {};
        return complete();
      default:
        return [];
    }
  };

  return {
    holdsWhole: jsonMode,
    push(event: UpstreamEvent): StreamOutput[] {
      if (failed || done) return [];
      if (event.kind !== 'message')
        return [{ type: 'malformed', detail: 'expected an event-stream message' }];
      const failure = bedrockEventFailure(provider, event);
      if (failure !== undefined) {
        failed = true;
        return [{ type: 'error', error: failure }];
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
