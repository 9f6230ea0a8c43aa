import type { Usage } from '../../core/openai-types.js';
import { isCount, usageObject, type AnswerUsageReader } from '../shared/answer-usage.js';
import type { BedrockUsage } from './bedrock-api-types.js';

/**
 * Converse's `inputTokens` leaves out tokens read from or written to the prompt cache; OpenAI's
 * `prompt_tokens` is the whole prompt, so they are added back; cache reads become `cached_tokens`, cache
 * writes `cache_write_tokens`, and those of them kept an hour (`cacheDetails` with `ttl: "1h"`)
 * `cache_write_1h_tokens` (not OpenAI's: writes are priced apart, an hour's higher, docs/cost.md).
 */
export function toOpenAIUsage(usage: BedrockUsage | undefined): Usage {
  const cacheRead = usage?.cacheReadInputTokens ?? 0;
  const cacheWrite = usage?.cacheWriteInputTokens ?? 0;
  const prompt = (usage?.inputTokens ?? 0) + cacheRead + cacheWrite;
  const completion = usage?.outputTokens ?? 0;
  const hour = Math.min(hourWrites(usage?.cacheDetails), cacheWrite);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details:
      cacheWrite > 0
        ? {
            cached_tokens: cacheRead,
            cache_write_tokens: cacheWrite,
            ...(hour > 0 && { cache_write_1h_tokens: hour }),
          }
        : { cached_tokens: cacheRead },
  };
}

function hourWrites(details: BedrockUsage['cacheDetails']): number {
  let tokens = 0;
  if (!Array.isArray(details)) return tokens;
  for (const detail of details) {
    if (detail?.ttl === '1h' && isCount(detail.inputTokens)) tokens += detail.inputTokens;
  }
  return tokens;
}

/** A Converse answer's usage (`inputTokens`, `outputTokens`); undefined for an answer that is not one. */
export const converseAnswerUsage: AnswerUsageReader = (answer) => {
  const usage = usageObject(answer);
  if (!usage || !isCount(usage.inputTokens) || !isCount(usage.outputTokens)) return undefined;
  return toOpenAIUsage(usage as BedrockUsage);
};

/**
 * Bedrock's own counts of an InvokeModel, in its answer's headers whatever the model (most models' bodies
 * carry none): `x-amzn-bedrock-input-token-count` (without the prompt cache's reads and writes, counted
 * apart), `…-output-token-count`.
 */
export function invokeHeadersUsage(headers: Record<string, string>): Usage | undefined {
  const count = (name: string) => {
    const value = headers[`x-amzn-bedrock-${name}-token-count`];
    const parsed = value === undefined || value.trim() === '' ? NaN : Number(value);
    return isCount(parsed) ? parsed : undefined;
  };
  const input = count('input');
  if (input === undefined) return undefined;
  const cacheRead = count('cache-read-input');
  const cacheWrite = count('cache-write-input');
  return toOpenAIUsage({
    inputTokens: input,
    outputTokens: count('output') ?? 0,
    ...(cacheRead !== undefined && { cacheReadInputTokens: cacheRead }),
    ...(cacheWrite !== undefined && { cacheWriteInputTokens: cacheWrite }),
  });
}

/**
 * Bedrock's own counts of an InvokeModelWithResponseStream, on its last event whatever the model
 * (`amazon-bedrock-invocationMetrics`): the input without the prompt cache's reads and writes, as Converse's.
 */
export const invocationMetricsUsage: AnswerUsageReader = (event) => {
  const metrics = event['amazon-bedrock-invocationMetrics'] as Record<string, unknown> | null | undefined;
  if (typeof metrics !== 'object' || metrics === null) return undefined;
  const { inputTokenCount, outputTokenCount, cacheReadInputTokenCount, cacheWriteInputTokenCount } = metrics;
  if (!isCount(inputTokenCount) || !isCount(outputTokenCount)) return undefined;
  return toOpenAIUsage({
    inputTokens: inputTokenCount,
    outputTokens: outputTokenCount,
    ...(isCount(cacheReadInputTokenCount) && { cacheReadInputTokens: cacheReadInputTokenCount }),
    ...(isCount(cacheWriteInputTokenCount) && { cacheWriteInputTokens: cacheWriteInputTokenCount }),
  });
};
