import type { ChatCompletionChunk, FinishReason } from '../../core/openai-types.js';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

/**
 * One streamed tool block on the OpenAI side: a real call, or the forced `json` tool of
 * response_format json_object, whose input is the answer's text.
 */
export type ToolBlock =
  { kind: 'tool'; toolIndex: number; sentArguments: boolean } | { kind: 'json'; sentText: boolean };

export interface ToolCallStream {
  /** A tool block starts: its state, and the delta announcing the call (none for the json answer). */
  open(id: string, name: string): { block: ToolBlock; delta?: Delta };
  /** A non-empty piece of the block's input JSON. */
  input(block: ToolBlock, part: string): Delta;
  /** The block ends: `{}` when it streamed no input at all, which keeps the concatenation valid JSON. */
  close(block: ToolBlock): Delta | undefined;
  /** A `tool_calls` finish with no real call was the json answer's tool: the answer simply stopped. */
  finishReason(reason: FinishReason): FinishReason;
}

/**
 * The tool-call bookkeeping of streams whose tool calls arrive as content blocks (Anthropic Messages,
 * Bedrock Converse): OpenAI tool indexes count tool blocks only, and in json mode the `json` tool's
 * input becomes content instead of a call.
 */
export function createToolCallStream(jsonMode: boolean, jsonToolName: string): ToolCallStream {
  let toolCount = 0;
  return {
    open(id, name) {
      if (jsonMode && name === jsonToolName) return { block: { kind: 'json', sentText: false } };
      const toolIndex = toolCount++;
      return {
        block: { kind: 'tool', toolIndex, sentArguments: false },
        delta: {
          tool_calls: [{ index: toolIndex, id, type: 'function', function: { name, arguments: '' } }],
        },
      };
    },
    input(block, part) {
      if (block.kind === 'json') {
        block.sentText = true;
        return { content: part };
      }
      block.sentArguments = true;
      return { tool_calls: [{ index: block.toolIndex, function: { arguments: part } }] };
    },
    close(block) {
      if (block.kind === 'tool' && !block.sentArguments) {
        block.sentArguments = true;
        return { tool_calls: [{ index: block.toolIndex, function: { arguments: '{}' } }] };
      }
      if (block.kind === 'json' && !block.sentText) {
        block.sentText = true;
        return { content: '{}' };
      }
      return undefined;
    },
    finishReason(reason) {
      return jsonMode && reason === 'tool_calls' && toolCount === 0 ? 'stop' : reason;
    },
  };
}
