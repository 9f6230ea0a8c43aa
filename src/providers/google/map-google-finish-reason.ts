import type { FinishReason } from '../../core/openai-types.js';

/**
 * Gemini's `finishReason` → OpenAI's. A candidate that stopped normally after calling functions reports
 * STOP; it becomes `tool_calls`. Reasons without an OpenAI counterpart (OTHER, MALFORMED_FUNCTION_CALL…)
 * become `stop`, the answer being as complete as it will get.
 */
export function mapGoogleFinishReason(
  reason: string | undefined,
  hasToolCalls: boolean,
): FinishReason | null {
  switch (reason) {
    case undefined:
    case 'FINISH_REASON_UNSPECIFIED':
      return null;
    case 'STOP':
      return hasToolCalls ? 'tool_calls' : 'stop';
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
    case 'IMAGE_PROHIBITED_CONTENT':
    case 'IMAGE_RECITATION':
      return 'content_filter';
    default:
      return hasToolCalls ? 'tool_calls' : 'stop';
  }
}
