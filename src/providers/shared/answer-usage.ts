/**
 * The usage of a provider's JSON answer relayed as it is (a pass-through), in the OpenAI shape the log,
 * cost and rate limits read. Each adapter knows which of its own answer shapes carry usage
 * (`ProviderAdapter.passthroughUsage`) and reads them with the same conversions its translated calls use;
 * these are the parts they share.
 */
import type { Usage } from '../../core/openai-types.js';
import { repairUsage } from '../openai/openai-schema-repair.js';

/** Reads one shape of answer; undefined when the answer is not of that shape. */
export type AnswerUsageReader = (answer: Record<string, unknown>) => Usage | undefined;

type Counts = Record<string, unknown>;

export const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** The answer's `usage` object, if it has one. */
export function usageObject(answer: Counts): Counts | undefined {
  const usage = answer.usage;
  return typeof usage === 'object' && usage !== null && !Array.isArray(usage) ? (usage as Counts) : undefined;
}

/** The first reader that recognises the answer. */
export function firstUsage(...readers: AnswerUsageReader[]): AnswerUsageReader {
  return (answer) => {
    for (const read of readers) {
      const usage = read(answer);
      if (usage) return usage;
    }
    return undefined;
  };
}

/** OpenAI's chat, completions and embeddings answers: `prompt_tokens` and `total_tokens` (an embedding's
 * usage has no `completion_tokens`; xAI's leave the reasoning tokens out of them, added back as the
 * translated calls do). */
export const openAIChatUsage: AnswerUsageReader = (answer) => {
  const usage = usageObject(answer);
  if (!usage || !isCount(usage.prompt_tokens) || !isCount(usage.total_tokens)) return undefined;
  const completion = isCount(usage.completion_tokens)
    ? usage.completion_tokens
    : Math.max(0, usage.total_tokens - usage.prompt_tokens);
  return repairUsage({ ...(usage as unknown as Usage), completion_tokens: completion });
};
