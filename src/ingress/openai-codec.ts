/**
 * The OpenAI wire: a JSON answer is sent as it is (byte for byte when the upstream's text is at hand); a
 * stream is data-only server-sent events ending with `data: [DONE]`, or with an in-band error event and
 * no `[DONE]` when it broke. Usage is always asked of the provider, so every call is recorded with its
 * tokens; the usage chunk reaches the client only when it asked (`stream_options.include_usage`).
 */
import type { GatewayError, ProviderError } from '../core/errors.js';
import type { AnswerChunk, JsonAnswer, OpenAIChunk } from '../gateway/sink.js';
import type { IngressCodec, StreamEncoder } from './codec.js';

const DONE = 'data: [DONE]\n\n';

class OpenAIStreamEncoder implements StreamEncoder {
  constructor(private readonly includeUsage: boolean) {}

  chunk(answerChunk: AnswerChunk, raw: string | undefined): string | undefined {
    // The OpenAI routes' operations answer in OpenAI chunks only.
    const chunk = answerChunk as OpenAIChunk;
    if (!this.includeUsage) {
      if (chunk.choices.length === 0) return undefined;
      if (chunk.usage) {
        const { usage: _usage, ...rest } = chunk;
        return `data: ${JSON.stringify(rest)}\n\n`;
      }
    }
    return `data: ${raw ?? JSON.stringify(chunk)}\n\n`;
  }

  end(): string {
    return DONE;
  }

  error(error: GatewayError | ProviderError): string {
    return `data: ${JSON.stringify(error.toBody())}\n\n`;
  }
}

export interface OpenAIStreamOptions {
  stream_options?: { include_usage?: boolean | null } | null;
}

export const openAICodec: IngressCodec<OpenAIStreamOptions> = {
  streamContentType: 'text/event-stream; charset=utf-8',
  streamEncoder: (body) => new OpenAIStreamEncoder(body.stream_options?.include_usage === true),
  answer: (answer: JsonAnswer) => answer.rawText ?? JSON.stringify(answer.body),
  errorBody: (error) => JSON.stringify(error.toBody()),
};
