/**
 * The failures of an Azure AI stream relayed as it is (a pass-through). Foundry serves Claude models with
 * Anthropic's Messages API (`/anthropic/v1/messages`), whose stream ends with Anthropic's `error` event
 * when it fails (an `overloaded_error` is 529); its other models answer on the OpenAI wire (chat
 * completions, the Responses API), read as OpenAI's.
 *
 * Anthropic's event is `{"type":"error","error":{"type",…}}`; the Responses API's `error` event is
 * `{"type":"error","code","message",…}` with its `sequence_number`, which every Responses event carries
 * and Anthropic's never does: that tells the two apart, so a Responses error keeps the status of its code.
 */
import { anthropicEventFailure } from '../anthropic/index.js';
import { openAIEventFailure } from '../openai/index.js';
import { firstFailure } from '../shared/stream-failure.js';
import type { StreamFailureReader } from '../types.js';

/** Anthropic's error event, from a Claude model's Messages stream. */
function isClaudeErrorEvent(json: Record<string, unknown> | undefined): boolean {
  return (
    json?.type === 'error' &&
    typeof json.error === 'object' &&
    json.error !== null &&
    json.sequence_number === undefined
  );
}

export function azureAIEventFailure(provider: string): StreamFailureReader {
  const claude = anthropicEventFailure(provider);
  return firstFailure(
    (event, json) => (event.kind === 'sse' && isClaudeErrorEvent(json) ? claude(event, json) : undefined),
    openAIEventFailure(provider),
  );
}
