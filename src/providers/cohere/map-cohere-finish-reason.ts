import type { FinishReason } from '../../core/openai-types.js';

/**
 * Cohere's finish reasons → OpenAI's. `ERROR` and `TIMEOUT` are not answers: the caller turns them into
 * a provider error (undefined here).
 */
export function mapCohereFinishReason(reason: string | undefined): FinishReason | undefined {
  switch (reason) {
    case 'COMPLETE':
    case 'STOP_SEQUENCE':
    case 'USER_CANCEL':
      return 'stop';
    case 'MAX_TOKENS':
    case 'ERROR_LIMIT':
      return 'length';
    case 'TOOL_CALL':
      return 'tool_calls';
    case 'ERROR_TOXIC':
      return 'content_filter';
    case 'ERROR':
    case 'TIMEOUT':
      return undefined;
    default:
      // An unknown but non-error reason still ended the answer.
      return 'stop';
  }
}

export function isCohereErrorFinish(reason: string | undefined): boolean {
  return reason === 'ERROR' || reason === 'TIMEOUT';
}
