/**
 * The Anthropic Messages wire (`/v1/messages`, `/v1/messages/count_tokens`). A provider that has the API
 * natively answers in it already: its JSON answer is sent as it came (byte for byte) and its stream events
 * each with their own `event:` name and JSON text. A translated call answers in chat: the answer becomes a
 * Message (messages/chat-to-message.ts), the chunks Anthropic's event grammar
 * (messages/chat-chunks-to-events.ts). A translated answer has thinking blocks only when the request
 * asked for thinking, as Anthropic's has, and without their text when it asked for them omitted
 * (`messagesCodecFor`). Errors are Anthropic's error object; a stream
 * that breaks ends with `event: error` and no `message_stop`.
 */
import type { GatewayError, ProviderError } from '../core/errors.js';
import { isMessagesStreamEvent, type MessagesStreamEvent } from '../core/messages-types.js';
import type { MessagesRequest } from '../core/schemas/messages-request.js';
import type { ChatCompletion, ChatCompletionChunk } from '../core/openai-types.js';
import type { AnswerChunk, JsonAnswer } from '../gateway/sink.js';
import type { IngressCodec, StreamEncoder } from './codec.js';
import { ChatChunksToMessageEvents } from './messages/chat-chunks-to-events.js';
import { chatToMessage, thinkingDisplay, type ThinkingDisplay } from './messages/chat-to-message.js';
import { messagesErrorBody } from './messages/messages-error.js';

class MessagesStreamEncoder implements StreamEncoder {
  private translated: ChatChunksToMessageEvents | undefined;
  /** The Message a native stream began, which chat chunks continuing it (another target's, after the
   * native stream broke) go on: its text block still open, and the index of its next block. */
  private native: { openText: number | undefined; nextIndex: number } | undefined;

  /** `display`: how a translated answer's thinking is shown (as the request asked: `thinkingDisplay`). */
  constructor(private readonly display: ThinkingDisplay) {}

  chunk(chunk: AnswerChunk, raw: string | undefined): string | undefined {
    if (isMessagesStreamEvent(chunk)) {
      this.noteNative(chunk);
      return `event: ${chunk.type}\ndata: ${raw ?? JSON.stringify(chunk)}\n\n`;
    }
    this.translated ??= new ChatChunksToMessageEvents(this.display, this.native);
    const text = this.translated.push(chunk as ChatCompletionChunk);
    return text === '' ? undefined : text;
  }

  private noteNative(event: MessagesStreamEvent): void {
    if (event.type === 'message_start') this.native ??= { openText: undefined, nextIndex: 0 };
    if (!this.native) return;
    if (event.type === 'content_block_start') {
      this.native.openText = event.content_block.type === 'text' ? event.index : undefined;
      this.native.nextIndex = event.index + 1;
    } else if (event.type === 'content_block_stop') this.native.openText = undefined;
  }

  end(): string {
    // A native stream's own message_stop went out already.
    return this.translated ? this.translated.end() : '';
  }

  error(error: GatewayError | ProviderError): string {
    return `event: error\ndata: ${JSON.stringify(messagesErrorBody(error))}\n\n`;
  }
}

function isChatCompletion(body: unknown): body is ChatCompletion {
  return (body as { object?: unknown } | null)?.object === 'chat.completion';
}

function messagesCodecShowing(display: ThinkingDisplay): IngressCodec<unknown> {
  return {
    streamContentType: 'text/event-stream; charset=utf-8',
    streamEncoder: () => new MessagesStreamEncoder(display),
    answer: (answer: JsonAnswer) =>
      isChatCompletion(answer.body)
        ? JSON.stringify(chatToMessage(answer.body, display))
        : (answer.rawText ?? JSON.stringify(answer.body)),
    errorBody: (error) => JSON.stringify(messagesErrorBody(error)),
  };
}

/** The codec of a request that did not ask for thinking, and of the gateway's refusals and errors. */
export const messagesCodec = messagesCodecShowing('none');
const codecsByDisplay: Readonly<Record<ThinkingDisplay, IngressCodec<unknown>>> = {
  none: messagesCodec,
  full: messagesCodecShowing('full'),
  omitted: messagesCodecShowing('omitted'),
};

/** The codec of one request: translated answers show thinking only when the request enabled it, and its
 * text unless the request's `thinking.display` is `omitted`. */
export function messagesCodecFor(
  request: Pick<MessagesRequest, 'thinking'> | undefined,
): IngressCodec<unknown> {
  return codecsByDisplay[thinkingDisplay(request)];
}
