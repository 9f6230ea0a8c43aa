import { GatewayError } from '../../core/errors.js';
import type {
  AssistantMessage,
  ChatMessage,
  UserContentPart,
  UserMessage,
} from '../../core/schemas/index.js';
import { CONVERSATION_START_TEXT } from '../shared/conversation-start.js';
import { returnedContentBlocks } from '../shared/returned-content-blocks.js';
import type { GeminiContent, GeminiPart } from './google-api-types.js';

/**
 * Google's documented placeholder for a replayed function call whose thought signature was lost
 * (Gemini 3 refuses such history otherwise). Real signatures carried back in `content_blocks` win.
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

/** File extensions whose media type Gemini needs named beside a `fileData` URL. */
const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
};

export interface GoogleMessages {
  systemInstruction?: GeminiContent;
  contents: GeminiContent[];
}

/**
 * OpenAI chat history → Gemini `systemInstruction` + `contents`.
 * System and developer messages, wherever they stand, join the one system instruction. Tool results
 * become `functionResponse` parts named after the assistant tool call they answer; consecutive turns of
 * one role are merged (Gemini wants the roles to alternate). A conversation with no turn but the system
 * prompt gets a minimal user turn, as Gemini needs at least one.
 */
export function convertToGoogleMessages(messages: ChatMessage[], model: string): GoogleMessages {
  const systemParts: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  const toolNames = new Map<string, string>();
  const injectSentinel = /(^|\/)gemini-3/.test(model);

  const push = (role: 'user' | 'model', parts: GeminiPart[]): void => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((message, i) => {
    switch (message.role) {
      case 'system':
      case 'developer':
        for (const text of textsOf(message, i)) if (text !== '') systemParts.push({ text });
        break;
      case 'user':
        push('user', userParts(message, i));
        break;
      case 'assistant':
        push('model', assistantParts(message, i, toolNames, injectSentinel));
        break;
      case 'tool': {
        const id = message.tool_call_id ?? '';
        const name = toolNames.get(id);
        if (name === undefined) {
          throw new GatewayError(
            'invalid_body',
            `messages[${i}].tool_call_id ${JSON.stringify(id)} does not match a tool call of an earlier assistant message`,
            { param: `messages[${i}].tool_call_id` },
          );
        }
        push('user', [{ functionResponse: { name, response: toolResponse(message, i) } }]);
        break;
      }
      case 'function':
        push('user', [
          {
            functionResponse: {
              name: message.name ?? '',
              response: toolResponse(message, i),
            },
          },
        ]);
        break;
      default:
        // Only a body that skipped the schema gets here.
        throw new GatewayError(
          'invalid_body',
          `messages[${i}].role ${String((message as ChatMessage).role)} is not supported`,
          {
            param: `messages[${i}].role`,
          },
        );
    }
  });

  // Gemini refuses a request without contents ("contents is not specified"), which a conversation of nothing
  // but a system prompt leaves: OpenAI answers it, so the model is given a minimal user turn to answer.
  if (contents.length === 0) contents.push({ role: 'user', parts: [{ text: CONVERSATION_START_TEXT }] });
  const result: GoogleMessages = { contents };
  if (systemParts.length > 0) result.systemInstruction = { parts: systemParts };
  return result;
}

function textsOf(message: ChatMessage, i: number): string[] {
  const { content } = message;
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [content];
  return content.map((part, j) => {
    if (part.type === 'text' && typeof part.text === 'string') return part.text;
    throw new GatewayError(
      'unsupported_parameter',
      `messages[${i}].content[${j}]: only text parts are accepted in a ${message.role} message`,
      {
        param: `messages[${i}].content[${j}]`,
      },
    );
  });
}

function userParts(message: UserMessage, i: number): GeminiPart[] {
  const { content } = message;
  if (content === undefined || content === null) return [];
  // Google refuses a text part with no text ("empty text parameter"), which OpenAI takes: it is left out.
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  return content.flatMap((part, j) =>
    part.type === 'text' && String(part.text) === '' ? [] : [userPart(part, i, j)],
  );
}

function userPart(part: UserContentPart, i: number, j: number): GeminiPart {
  const where = `messages[${i}].content[${j}]`;
  switch (part.type) {
    case 'text':
      return { text: String(part.text) };
    case 'image_url': {
      const url = part.image_url?.url;
      if (typeof url !== 'string') {
        throw new GatewayError('invalid_body', `${where}.image_url.url must be a string`, {
          param: `${where}.image_url`,
        });
      }
      return mediaPart(url, `${where}.image_url`);
    }
    case 'input_audio': {
      const audio = part.input_audio;
      return { inlineData: { mimeType: `audio/${audio.format}`, data: audio.data } };
    }
    case 'file': {
      const file = part.file;
      if (typeof file.file_data === 'string') return mediaPart(file.file_data, `${where}.file`);
      // Google fetches it (https, gs://); the gateway never does.
      if (typeof file.file_url === 'string') {
        return mediaPart(file.file_url, `${where}.file.file_url`, 'application/pdf');
      }
      throw new GatewayError(
        'unsupported_parameter',
        `${where}.file: file_id is not supported by google; send file_data`,
        {
          param: `${where}.file`,
        },
      );
    }
    default:
      throw new GatewayError(
        'unsupported_parameter',
        `${where}: content part type ${(part as UserContentPart).type} is not supported by google`,
        {
          param: where,
        },
      );
  }
}

/**
 * Data URLs go inline. http(s) and gs:// URLs go as `fileData` and Google fetches them (Vertex reads gs://
 * and public https; the Gemini API reads its own file URIs, YouTube and public https); anything else is
 * refused, since the adapter does no I/O to fetch it itself.
 */
function mediaPart(url: string, param: string, defaultMimeType = 'image/jpeg'): GeminiPart {
  if (url.startsWith('data:')) {
    const match = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
    if (!match) {
      throw new GatewayError(
        'invalid_body',
        `${param}: a data URL must be base64 encoded (data:<type>;base64,...)`,
        { param },
      );
    }
    return { inlineData: { mimeType: mediaType(match[1]), data: match[2] } };
  }
  if (/^(https?|gs):\/\//i.test(url)) {
    const extension = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(url)?.[1]?.toLowerCase();
    const mimeType = (extension && MIME_BY_EXTENSION[extension]) || defaultMimeType;
    return { fileData: { mimeType, fileUri: url } };
  }
  throw new GatewayError(
    'unsupported_parameter',
    `${param}: only data:, https:// and gs:// URLs are accepted by google`,
    {
      param,
    },
  );
}

/** Media type names Google does not take, under the name it does (data:image/jpg is common, and OpenAI's). */
const MEDIA_TYPE_ALIASES: Record<string, string> = { 'image/jpg': 'image/jpeg' };

function mediaType(name: string): string {
  const lower = name.trim().toLowerCase();
  return MEDIA_TYPE_ALIASES[lower] ?? lower;
}

function assistantParts(
  message: AssistantMessage,
  i: number,
  toolNames: Map<string, string>,
  injectSentinel: boolean,
): GeminiPart[] {
  const parts: GeminiPart[] = assistantTexts(message)
    .filter((text) => text.length > 0)
    .map((text) => ({ text }));
  const calls: GeminiPart[] = [];
  (message.tool_calls ?? []).forEach((call, k) => {
    toolNames.set(call.id, call.function.name);
    calls.push({
      functionCall: {
        name: call.function.name,
        args: parseArguments(call.function.arguments, `messages[${i}].tool_calls[${k}].function.arguments`),
      },
    });
  });
  if (message.function_call) {
    calls.push({
      functionCall: {
        name: message.function_call.name,
        args: parseArguments(message.function_call.arguments, `messages[${i}].function_call.arguments`),
      },
    });
  }
  // The one signature Gemini gave rides on one thinking block; the others carry none, or "" where the
  // answer went out as an Anthropic Message (whose thinking blocks all have a signature field).
  const signature = returnedContentBlocks(message).find((block) => block.signature)?.signature;
  const first = calls[0] ?? parts[0];
  if (first && signature) first.thoughtSignature = signature;
  else if (calls[0] && injectSentinel) calls[0].thoughtSignature = SKIP_THOUGHT_SIGNATURE;
  return [...parts, ...calls];
}

/** The text an assistant message said. A refusal part of an earlier answer carries nothing the model needs
 * back: it is left out, as on the other adapters; thinking parts travel with the returned reasoning
 * (returnedContentBlocks). */
function assistantTexts(message: AssistantMessage): string[] {
  const { content } = message;
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [content];
  return content.flatMap((part) => (part.type === 'text' ? [part.text] : []));
}

function parseArguments(text: string, param: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new GatewayError('invalid_body', `${param} must be a JSON object`, { param });
}

/**
 * Gemini wants an object: a JSON object result is passed as it is, anything else wrapped as `{content}`.
 * Text parts are joined one line each (Anthropic and Bedrock receive them as separate blocks).
 */
function toolResponse(message: ChatMessage, i: number): Record<string, unknown> {
  const text = textsOf(message, i).join('\n');
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // plain text
  }
  return { content: text };
}
