import { GatewayError } from '../../core/errors.js';
import type {
  AssistantMessage,
  ChatMessage,
  DeveloperMessage,
  SystemMessage,
  ToolMessage,
  UserMessage,
} from '../../core/schemas/index.js';

export interface AlternatingTurn<Block> {
  role: 'user' | 'assistant';
  content: Block[];
}

/** How one provider turns each kind of OpenAI message into its own content blocks. */
export interface TurnBlocks<Block> {
  /** The provider's name, for the error refusing an unknown role. */
  provider: string;
  /** Blocks of a system or developer message, which go to the separate system prompt. */
  system(message: SystemMessage | DeveloperMessage, where: string): Block[];
  user(message: UserMessage, where: string): Block[];
  assistant(message: AssistantMessage, where: string): Block[];
  /** The result block of a `tool` message; its `tool_call_id` has been checked already. */
  toolResult(message: ToolMessage, toolCallId: string, where: string): Block;
  /** A message's blocks with what the message itself says of them added: its `cache_control` (the chat
   * extension LiteLLM and Portkey take on a whole message), a prompt-cache breakpoint after its last block.
   * Absent: the blocks as they are. `where` is the message's field (`messages[3]`). */
  marked?(message: ChatMessage, blocks: Block[], where: string): Block[];
}

/**
 * OpenAI messages → a system prompt and user/assistant turns that alternate, as the Anthropic Messages
 * and Bedrock Converse APIs demand. System and developer messages are collected wherever they appear
 * (neither API has a mid-conversation system turn); a tool result becomes a block of a user turn; and
 * consecutive turns of one role are merged, so parallel tool results end up in a single user turn.
 */
export function toAlternatingTurns<Block>(
  messages: ChatMessage[],
  blocks: TurnBlocks<Block>,
): { system: Block[]; turns: AlternatingTurn<Block>[] } {
  const system: Block[] = [];
  const turns: AlternatingTurn<Block>[] = [];

  const push = (role: 'user' | 'assistant', content: Block[]) => {
    if (content.length === 0) return;
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.content.push(...content);
    else turns.push({ role, content });
  };

  const marked = (message: ChatMessage, content: Block[], where: string): Block[] =>
    blocks.marked && content.length > 0 ? blocks.marked(message, content, where) : content;

  messages.forEach((message, i) => {
    const where = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...marked(message, blocks.system(message, where), where));
        break;
      case 'user':
        push('user', marked(message, blocks.user(message, where), where));
        break;
      case 'assistant':
        push('assistant', marked(message, blocks.assistant(message, where), where));
        break;
      case 'tool':
        push(
          'user',
          marked(message, [blocks.toolResult(message, requireToolCallId(message, where), where)], where),
        );
        break;
      default:
        throw new GatewayError(
          'unsupported_parameter',
          `${where}.role '${message.role}' is not supported by ${blocks.provider}; use tools and role 'tool'`,
          { param: `${where}.role` },
        );
    }
  });
  return { system, turns };
}

function requireToolCallId(message: ToolMessage, where: string): string {
  if (typeof message.tool_call_id !== 'string' || message.tool_call_id === '') {
    throw new GatewayError('invalid_body', `${where}.tool_call_id is required for role 'tool'`, {
      param: `${where}.tool_call_id`,
    });
  }
  return message.tool_call_id;
}
