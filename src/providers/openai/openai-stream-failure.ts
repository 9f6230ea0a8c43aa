/**
 * The failures of an OpenAI-wire stream relayed as it is (a pass-through), read as the translated calls'
 * streams read them: a chat or completions chunk with an `error` (isOpenAIStreamError), and the Responses
 * API's `error` and `response.failed` events (responsesStreamError).
 */
import type { StreamFailureReader } from '../types.js';
import { isOpenAIStreamError, openAIStreamError } from './openai-error.js';
import { responsesStreamError } from './openai-responses-operation.js';

export function openAIEventFailure(provider: string): StreamFailureReader {
  return (event, json) => {
    if (event.kind !== 'sse' || !json) return undefined;
    if (isOpenAIStreamError(event.event, json)) return openAIStreamError(provider, json);
    return responsesStreamError(provider, event.event, json);
  };
}
