/** OpenAI chat messages → Cohere v2 messages. */
import { GatewayError } from '../../core/errors.js';
import type {
  AssistantMessage,
  ChatMessage,
  UserContentPart,
  UserMessage,
} from '../../core/schemas/index.js';
import { returnedContentBlocks } from '../shared/returned-content-blocks.js';
import type { CohereImagePart, CohereMessage, CohereTextPart } from './cohere-api-types.js';

export function convertToCohereMessages(messages: ChatMessage[]): CohereMessage[] {
  return messages.map((message, i) => convertMessage(message, `messages[${i}]`));
}

function convertMessage(message: ChatMessage, where: string): CohereMessage {
  switch (message.role) {
    case 'system':
    case 'developer':
      // Cohere has no developer role; its system message plays that part.
      return { role: 'system', content: textOnly(message.content, `${where}.content`) };
    case 'user':
      return { role: 'user', content: userContent(message.content, `${where}.content`) };
    case 'assistant':
      return assistantMessage(message);
    case 'tool':
      if (!message.tool_call_id) {
        throw new GatewayError('invalid_body', 'A tool message needs its `tool_call_id`.', {
          param: `${where}.tool_call_id`,
        });
      }
      return {
        role: 'tool',
        tool_call_id: message.tool_call_id,
        // One line each, as the Gemini adapter joins them (Anthropic and Bedrock take them as blocks).
        content: textOnly(message.content, `${where}.content`, '\n'),
      };
    default:
      throw new GatewayError(
        'unsupported_parameter',
        `Messages of role \`${message.role}\` are not supported for Cohere.`,
        {
          param: `${where}.role`,
        },
      );
  }
}

function assistantMessage(message: AssistantMessage): CohereMessage {
  const out: Extract<CohereMessage, { role: 'assistant' }> = { role: 'assistant' };
  const text = assistantText(message.content);
  if (text) out.content = text;
  if (message.tool_calls?.length) {
    out.tool_calls = message.tool_calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.function.name, arguments: call.function.arguments },
    }));
    // The thinking the gateway returned for a tool-calling turn was Cohere's tool plan: give it back.
    const plan = returnedContentBlocks(message)
      .filter((block) => block.type === 'thinking' && block.thinking)
      .map((block) => block.thinking)
      .join('');
    if (plan) out.tool_plan = plan;
  }
  if (!out.content && !out.tool_calls) out.content = '';
  return out;
}

function userContent(
  content: UserMessage['content'],
  where: string,
): string | Array<CohereTextPart | CohereImagePart> {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return content.map((part, j) => userPart(part, `${where}[${j}]`));
}

function userPart(part: UserContentPart, where: string): CohereTextPart | CohereImagePart {
  if (part.type === 'text') return { type: 'text', text: String(part.text ?? '') };
  if (part.type === 'image_url') {
    const image = part.image_url;
    // Cohere takes http(s) URLs and base64 data URLs alike in `image_url.url`.
    return {
      type: 'image_url',
      image_url: image.detail ? { url: image.url, detail: image.detail } : { url: image.url },
    };
  }
  throw new GatewayError(
    'unsupported_parameter',
    `Content parts of type \`${part.type}\` are not supported for Cohere.`,
    {
      param: `${where}.type`,
    },
  );
}

/** The text an assistant message said. A refusal part of an earlier answer carries nothing the model needs
 * back: it is left out, as on the other adapters; thinking parts travel with the returned reasoning
 * (returnedContentBlocks). */
function assistantText(content: AssistantMessage['content']): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** Text of a message whose role takes text only (system, tool), its parts joined by `separator`. */
function textOnly(content: ChatMessage['content'], where: string, separator = ''): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part, j) => {
      if (part.type !== 'text') {
        throw new GatewayError('unsupported_parameter', `Only text content is supported here for Cohere.`, {
          param: `${where}[${j}].type`,
        });
      }
      return String(part.text ?? '');
    })
    .join(separator);
}
