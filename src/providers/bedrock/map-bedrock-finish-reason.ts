import { ProviderError } from '../../core/errors.js';
import type { FinishReason } from '../../core/openai-types.js';

/** Stop reasons with which Bedrock gives up on output the model wrote wrong (a tool call that does not parse). */
const INVALID_OUTPUT_REASONS = new Set(['malformed_model_output', 'malformed_tool_use']);

/**
 * The failure of an answer that ended with invalid output and holds neither text nor a tool call: OpenAI fails
 * such output ("The model produced invalid content", a 500), and so does the gateway, rather than pass an
 * empty `stop` off as the answer; a retry or a fallback can then take over. Undefined for any other end.
 */
export function bedrockInvalidOutput(
  provider: string,
  stopReason: string | undefined,
  answered: boolean,
): ProviderError | undefined {
  if (answered || stopReason === undefined || !INVALID_OUTPUT_REASONS.has(stopReason)) return undefined;
  return new ProviderError({
    status: 500,
    provider,
    message: `${provider} produced invalid content (stopReason ${stopReason}) and no answer`,
    code: stopReason,
  });
}

export function mapBedrockFinishReason(stopReason: string | undefined): FinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'content_filtered':
    case 'guardrail_intervened':
      return 'content_filter';
    case 'end_turn':
    case 'stop_sequence':
    default:
      return 'stop';
  }
}
