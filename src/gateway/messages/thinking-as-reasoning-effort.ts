/**
 * A Messages request's reasoning settings for a provider whose adapter has no thinking option (OpenAI, Azure,
 * and the OpenAI-wire family but for servers that take it as given): OpenAI's `reasoning_effort`, for the
 * models that take it. Anthropic's `output_config.effort` is the closest of its settings and wins, as in
 * LiteLLM's Messages adapter (`xhigh` and `max` are `high`: only the newest GPT-5 models take more). Else an
 * enabled thinking budget is bucketed as LiteLLM buckets it (10,000 tokens and more `high`, 5,000
 * `medium`, less `low`), but for `minimal`, which only the first GPT-5 models take: o-series models and
 * GPT-5.1 on refuse it, and `low` is the least every reasoning model takes. Another model gets no reasoning
 * parameter (OpenAI refuses `reasoning_effort` for gpt-4o, gpt-4.1, the gpt-5 chat models): the thinking
 * is left out, as the adapter would leave it out.
 */
import type { ChatCompletionRequest } from '../../core/schemas/index.js';

type Effort = 'low' | 'medium' | 'high';

/** OpenAI's reasoning models (o1 but its mini and preview, o3, o4-mini…, GPT-5 but its chat models) and the
 * open-weight gpt-oss models, as their hosts name them (`openai/gpt-oss-120b` on Groq). */
const TAKES_REASONING_EFFORT = /(^|\/)(o1(?!-mini|-preview)|o[3-9]|gpt-5(?![.\d]*-chat)|gpt-oss)/i;

const EFFORTS: Readonly<Record<string, Effort>> = {
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'high',
  max: 'high',
};

export function reasoningEffortOfBudget(budgetTokens: number): Effort {
  return budgetTokens >= 10_000 ? 'high' : budgetTokens >= 5_000 ? 'medium' : 'low';
}

/** The chat request with its reasoning asked as `reasoning_effort` where `model` takes it, and without the
 * gateway's thinking option. `effort`: the Messages request's `output_config.effort`. */
export function thinkingAsReasoningEffort(
  body: ChatCompletionRequest,
  model: string,
  effort: string | null | undefined,
): ChatCompletionRequest {
  const { thinking, ...rest } = body as ChatCompletionRequest & {
    thinking?: { type: string; budget_tokens?: number };
  };
  const budget = thinking?.type === 'enabled' ? thinking.budget_tokens : undefined;
  const asked =
    (effort != null && Object.hasOwn(EFFORTS, effort) ? EFFORTS[effort] : undefined) ??
    (budget !== undefined ? reasoningEffortOfBudget(budget) : undefined);
  if (asked === undefined || !TAKES_REASONING_EFFORT.test(model) || rest.reasoning_effort != null) {
    return thinking === undefined ? body : rest;
  }
  return { ...rest, reasoning_effort: asked };
}

/** The chat request without the gateway's thinking option, for a model that takes none. */
export function withoutThinking(body: ChatCompletionRequest): ChatCompletionRequest {
  if (!('thinking' in body)) return body;
  const { thinking: _thinking, ...rest } = body as ChatCompletionRequest & { thinking?: unknown };
  return rest;
}
