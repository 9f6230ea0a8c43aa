import { GatewayError } from '../../core/errors.js';
import type { ChatCompletionRequest } from '../../core/schemas/index.js';
import type { GeminiThinkingConfig, GeminiThinkingLevel } from './google-api-types.js';

/** Gemini 3 and later think in levels (`thinkingLevel`); earlier models in token budgets. */
const THINKS_IN_LEVELS = /(^|\/)gemini-3/;
/** Gemini 3 Pro models cannot think less than `low`. */
const PRO = /(^|\/)gemini-[^/]*-pro/;

/** `reasoning_effort` as a budget for models that think in tokens: the figures of Google's own OpenAI
 * compatibility layer (none turns thinking off). */
const BUDGET_BY_EFFORT: Record<string, number> = {
  none: 0,
  minimal: 1024,
  low: 1024,
  medium: 8192,
  high: 24576,
  xhigh: 24576,
  max: 24576,
};

const LEVEL_BY_EFFORT: Record<string, GeminiThinkingLevel> = {
  none: 'minimal',
  minimal: 'minimal',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'high',
  max: 'high',
};

/**
 * The `thinkingConfig` of a chat request: the gateway's `thinking` option (a budget; `disabled` → 0), else
 * OpenAI's `reasoning_effort` — a `thinkingLevel` on Gemini 3 models (none and minimal are `minimal`, or
 * `low` on Pro models, which cannot think less; xhigh and max are `high`), a `thinkingBudget` on earlier ones. Thought
 * summaries are asked for whenever the model thinks and the answer can carry them (not strict).
 */
export function geminiThinkingConfig(
  body: ChatCompletionRequest,
  model: string,
  strictCompat: boolean,
): GeminiThinkingConfig | undefined {
  const thinking = body.thinking;
  if (thinking?.type === 'disabled') return { thinkingBudget: 0 };
  if (thinking?.type === 'enabled') {
    const config: GeminiThinkingConfig = { includeThoughts: !strictCompat };
    if (typeof thinking.budget_tokens === 'number') config.thinkingBudget = thinking.budget_tokens;
    return config;
  }
  const effort = body.reasoning_effort;
  if (effort === undefined || effort === null) return undefined;
  if (!(effort in BUDGET_BY_EFFORT)) {
    throw new GatewayError(
      'invalid_body',
      `reasoning_effort ${JSON.stringify(effort)} is not one of ${Object.keys(BUDGET_BY_EFFORT).join(', ')}`,
      { param: 'reasoning_effort' },
    );
  }
  if (THINKS_IN_LEVELS.test(model)) {
    const level = LEVEL_BY_EFFORT[effort] as GeminiThinkingLevel;
    return {
      thinkingLevel: level === 'minimal' && PRO.test(model) ? 'low' : level,
      includeThoughts: !strictCompat,
    };
  }
  const budget = BUDGET_BY_EFFORT[effort] as number;
  return budget === 0 ? { thinkingBudget: 0 } : { thinkingBudget: budget, includeThoughts: !strictCompat };
}
