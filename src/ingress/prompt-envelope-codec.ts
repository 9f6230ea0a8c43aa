/**
 * The prompt completion envelope: a non-streamed answer is `{status, headers, body}`, where `body` is the
 * chat (or text) completion exactly as the OpenAI codec would send it (the upstream's own bytes when they
 * are relayed as they are) and `headers` are the answer's response headers (the gateway's route headers,
 * the prompt's id and version, the provider's forwarded headers). Streams are the OpenAI codec's:
 * data-only server-sent events ending with `data: [DONE]`. Errors are the OpenAI error object.
 */
import type { JsonAnswer } from '../gateway/sink.js';
import type { IngressCodec } from './codec.js';
import { openAICodec, type OpenAIStreamOptions } from './openai-codec.js';

/** `status` of an envelope: the call succeeded (a failed call answers with an error object instead). */
export const ENVELOPE_SUCCESS = 'success';

export function promptEnvelopeCodec(
  headersOf: (answer: JsonAnswer) => Record<string, string>,
): IngressCodec<OpenAIStreamOptions> {
  return {
    ...openAICodec,
    answer: (answer) =>
      `{"status":"${ENVELOPE_SUCCESS}","headers":${JSON.stringify(headersOf(answer))},` +
      `"body":${openAICodec.answer(answer)}}`,
  };
}
