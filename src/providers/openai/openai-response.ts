import { ProviderError } from '../../core/errors.js';
import type { AdapterRequest, UpstreamResponse } from '../types.js';
import { statusOfErrorCode } from './openai-error.js';
import { repairChatCompletion } from './openai-schema-repair.js';

/** OpenAI-wire answers are already in the client's shape (repaired where a provider breaks OpenAI's schema,
 * ./openai-schema-repair.ts); a 2xx body carrying an `error` is a failure. */
export function parseOpenAIResponse(provider: string, req: AdapterRequest, res: UpstreamResponse): unknown {
  const body = res.body;
  if (typeof body !== 'object' || body === null) {
    throw new ProviderError({
      status: 502,
      provider,
      message: `${provider} answered with a body that is not JSON`,
    });
  }
  const error = (body as { error?: { message?: string; type?: string; code?: unknown } }).error;
  if (error && !('choices' in body) && !('data' in body)) {
    throw new ProviderError({
      status: statusOfErrorCode(error.code) ?? 502,
      provider,
      message: error.message ?? `${provider} answered 2xx with an error`,
      type: error.type,
      code: typeof error.code === 'string' ? error.code : null,
    });
  }
  return repairChatCompletion(body as Record<string, unknown>, req.strictCompat);
}
