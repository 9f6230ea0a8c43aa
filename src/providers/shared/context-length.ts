/**
 * A refusal because the prompt is longer than the model's context window, in OpenAI's shape: status 400,
 * `code: "context_length_exceeded"`, type `invalid_request_error`, param `messages`, so that clients and
 * fallbacks keyed on that code work whichever provider refused. The provider's message is kept.
 */
import { ProviderError } from '../../core/errors.js';

export const CONTEXT_LENGTH_EXCEEDED = 'context_length_exceeded';

/** The messages providers give such a refusal (with its 400), each as the provider words it. */
const CONTEXT_LENGTH_MESSAGES: readonly RegExp[] = [
  // Anthropic (and Claude on Vertex AI): "prompt is too long: 209353 tokens > 199999 maximum"
  /\bprompt is too long: \d+ tokens > \d+ maximum\b/i,
  // Anthropic, when the prompt and max_tokens together do not fit:
  // "input length and max_tokens exceed context limit: 198981 + 21333 > 200000, decrease input length or …"
  /\binput length and `?max_tokens`? exceed context limit: \d+ \+ \d+ > \d+/i,
  // Bedrock (ValidationException, Converse and InvokeModel): "Input is too long for requested model."
  /\binput is too long for requested model\b/i,
  // Gemini and Vertex AI (INVALID_ARGUMENT):
  // "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)."
  /\binput token count \(\d+\) exceeds the maximum number of tokens allowed\b/i,
  // OpenAI's own wording, which DeepSeek sends with code "invalid_request_error":
  // "This model's maximum context length is 65536 tokens. However, you requested 66343 tokens (…)"
  /\bmaximum context length is \d+ tokens\b/i,
  // xAI: "This model's maximum prompt length is 131072 but the request contains 136973 tokens."
  /\bmaximum prompt length is \d+ but the request contains \d+ tokens\b/i,
  // Mistral: "Prompt contains 300000 tokens, too large for model with 131072 maximum context length" (also
  // "Prompt contains 40989 tokens and 0 draft tokens, too large for model with 32768 …")
  /\btoo large for model with \d+ maximum context length\b/i,
  // Cohere, whose refusals of a prompt's size begin "too many tokens:" ("…: total number of tokens in the prompt
  // cannot exceed 4081 - received 4292.", "…: size limit exceeded by 11326 tokens.", "…: minimal context could
  // not be added to prompt (size limit exceeded by 280 tokens)", "…: multi-hop prompt is too long even after
  // truncation"); not "too many tokens: max tokens must be less than or equal to …", which is max_tokens
  /\btoo many tokens: (?:total number of tokens in the prompt cannot exceed \d+|size limit exceeded by \d+ tokens|minimal context could not be added to prompt|multi-hop prompt is too long)/i,
];

export function isContextLengthMessage(message: string): boolean {
  return CONTEXT_LENGTH_MESSAGES.some((pattern) => pattern.test(message));
}

/**
 * The error as OpenAI's context_length_exceeded when it is a 400 whose code already says so or whose
 * message is one of the above; any other error unchanged.
 */
export function withContextLengthCode(error: ProviderError): ProviderError {
  if (error.status !== 400) return error;
  if (error.code !== CONTEXT_LENGTH_EXCEEDED && !isContextLengthMessage(error.message)) return error;
  if (
    error.code === CONTEXT_LENGTH_EXCEEDED &&
    error.type === 'invalid_request_error' &&
    error.param !== null
  ) {
    return error;
  }
  return new ProviderError({
    status: 400,
    provider: error.provider,
    message: error.message,
    type: 'invalid_request_error',
    code: CONTEXT_LENGTH_EXCEEDED,
    param: error.param ?? 'messages',
    retryAfterMs: error.retryAfterMs,
    headers: error.headers,
  });
}
