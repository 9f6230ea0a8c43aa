import type { Usage } from '../../core/openai-types.js';
import { usageObject, type AnswerUsageReader } from '../shared/answer-usage.js';
import type { CohereUsage } from './cohere-api-types.js';

/**
 * Cohere reports `billed_units` (what is charged) and `tokens` (what the model saw: the prompt wrapped in
 * Cohere's own template and preamble, several hundred tokens more, most of them `cached_tokens`). OpenAI's
 * usage is what the call is billed for, and the gateway prices and rate-limits it, so `billed_units` wins
 * and `tokens` is the fallback; the cached count, which is of the template's tokens, goes with `tokens`.
 */
export function convertCohereUsage(usage: CohereUsage | undefined): Usage | undefined {
  if (!usage) return undefined;
  const billed = usage.billed_units;
  const counts = billed ?? usage.tokens;
  if (!counts) return undefined;
  const prompt = counts.input_tokens ?? 0;
  const completion = counts.output_tokens ?? 0;
  const out: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
  if (!billed && typeof usage.cached_tokens === 'number')
    out.prompt_tokens_details = { cached_tokens: usage.cached_tokens };
  return out;
}

/** An answer's usage (`tokens` or `billed_units`), in v2's `usage` or v1's `meta`; undefined for an
 * answer without token counts. */
export const cohereAnswerUsage: AnswerUsageReader = (answer) => {
  const usage = (usageObject(answer) ?? usageObject({ usage: answer.meta })) as CohereUsage | undefined;
  const counts = usage?.tokens ?? usage?.billed_units;
  return typeof counts === 'object' && counts !== null ? convertCohereUsage(usage) : undefined;
};

/** A v2 chat stream's usage: its `message-end` event's, in `delta.usage` (read for a pass-through's
 * stream, as a translated call's stream reads it). */
export const cohereStreamEndUsage: AnswerUsageReader = (event) => {
  if (event.type !== 'message-end') return undefined;
  const delta = event.delta;
  return typeof delta === 'object' && delta !== null && !Array.isArray(delta)
    ? cohereAnswerUsage(delta as Record<string, unknown>)
    : undefined;
};
