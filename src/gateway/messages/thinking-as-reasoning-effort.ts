/**
 * A Messages request's extended thinking for a provider whose adapter has no thinking option (OpenAI, Azure,
 * and the OpenAI-wire family but for servers that take it as given): OpenAI's `reasoning_effort`, for the
 * models that take it. The budget is bucketed as LiteLLM's Messages adapter buckets it (10,000 tokens and
 * more `high`, 5,000 `medium`, less `low`), but for `minimal`, which only the first GPT-5 models take: o-series
 * models and GPT-5.1 on refuse it, and `low` is the least every reasoning model takes. Another model gets no
 * reasoning parameter (OpenAI refuses `reasoning_effort` for gpt-4o, gpt-4.1, the gpt-5 chat models):
 * the thinking is left out, as the adapter would leave it out.
 */
import type { ChatCompletionRequest } from '../../core/schemas/index.js';

/** OpenAI's reasoning models (o1 but its mini and preview, o3, o4-mini…, GPT-5 but its chat models) and the
 * open-weight gpt-oss models, as their hosts name them (`openai/gpt-oss-120b` on Groq). */
const TAKES_REASONING_EFFORT = /(^|\/)(o1(?!-mini|-preview)|o[3-9]|gpt-5(?![.\d]*-chat)|gpt-oss)/i;

export function reasoningEffortOfBudget(budgetTokens: number): 'low' | 'medium' | 'high' {
  return budgetTokens >= 10_000 ? 'high' : budgetTokens >= 5_000 ? 'medium' : 'low';
}

/** The chat request with its thinking as `reasoning_effort` where `model` takes it, and without thinking. */
export function thinkingAsReasoningEffort(body: ChatCompletionRequest, model: string): ChatCompletionRequest {
  const { thinking, ...rest } = body as ChatCompletionRequest & {
    thinking?: { type: string; budget_tokens?: number };
  };
  if (thinking === undefined) return body;
  const budget = thinking.type === 'enabled' ? thinking.budget_tokens : undefined;
  if (budget === undefined || !TAKES_REASONING_EFFORT.test(model) || rest.reasoning_effort != null) {
    return rest;
  }
  return { ...rest, reasoning_effort: reasoningEffortOfBudget(budget) };
}
