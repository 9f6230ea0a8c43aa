/**
 * What a call cost: the sum of its attempts' costs, each priced with the provider and model that answered
 * it (a fallback from OpenAI to Anthropic is priced at both). A cache answer costs nothing; a failed attempt
 * is not billed, unless the provider had counted tokens before it broke (a stream cut, or left by its
 * client, after Anthropic's message_start or Gemini's first chunk): those it bills. A call that reached no
 * provider costs nothing. Unknown (null) when an answering model is not in the price table, rather than a
 * sum that leaves part of the call out.
 */
import type { Usage } from '../core/openai-types.js';
import { usageCost, type CostOptions } from '../observability/pricing/cost.js';
import type { PriceTable } from '../observability/pricing/price-table.js';
import { answeredFromCache } from './cache/response-cache.js';
import type { AttemptRecord } from './pipeline-types.js';

/** Dollars of one priced answer, or null when the model has no price. */
export function answerCost(
  prices: PriceTable,
  provider: string | null,
  model: string | null | undefined,
  usage: Usage | undefined,
  options?: CostOptions,
): number | null {
  if (!usage || !provider || !model || typeof usage.prompt_tokens !== 'number') return null;
  const match = prices.lookup(provider, model);
  return match ? usageCost(match, usage, options) : null;
}

/** Dollars of one attempt: 0 for a cache answer or a call that failed before the provider counted tokens;
 * null when the answer's usage or price is unknown. */
export function attemptCost(prices: PriceTable, attempt: AttemptRecord): number | null {
  const { outcome } = attempt;
  if (answeredFromCache(attempt.cacheStatus)) return 0;
  const options = { tier: servedTier(attempt) };
  if (!outcome.ok) {
    return outcome.usage ? answerCost(prices, attempt.provider, attempt.model, outcome.usage, options) : 0;
  }
  return answerCost(prices, attempt.provider, outcome.model ?? attempt.model, outcome.usage, options);
}

/**
 * The service tier an attempt was billed on, as its answer names it (OpenAI's `service_tier`, a stream's
 * chunks' or events' too; Anthropic's `usage.service_tier`, a stream's `message_start`; Gemini's
 * `x-gemini-service-tier` header): priority asked for may be served, and billed, on the default tier, and a
 * project set to priority serves calls that asked for none on it. Not the one asked for: a provider the
 * gateway does not send it to (Gemini's chat translation drops it) serves the call on its standard tier.
 */
function servedTier(attempt: AttemptRecord): string | undefined {
  const { outcome } = attempt;
  const answer = outcome.ok ? outcome.body : undefined;
  if (typeof answer === 'object' && answer !== null) {
    const { service_tier: named, usage } = answer as {
      service_tier?: unknown;
      usage?: { service_tier?: unknown };
    };
    // Anthropic's Messages answer names it in its usage.
    const tier = named ?? usage?.service_tier;
    if (typeof tier === 'string') return tier;
  }
  // A stream's chunks or events name it (OpenAI's chat and Responses, Anthropic's message_start).
  if (outcome.ok && outcome.serviceTier) return outcome.serviceTier;
  // Gemini's names it in a header, on a stream too (`flex`, or the enum's `SERVICE_TIER_FLEX`).
  const header = outcome.ok ? outcome.upstreamHeaders['x-gemini-service-tier'] : undefined;
  return header ? header.toLowerCase().replace(/^service_tier_/, '') : undefined;
}

/**
 * Dollars of a whole call. `answered` prices a call whose answer's usage its attempts do not carry (a
 * pass-through reads it from the relayed body); `failed` when that answer ended with the provider's error
 * (a stream's error event), which is billed as a failed attempt is: its usage if it reported any, else
 * nothing.
 */
export function callCost(
  prices: PriceTable,
  attempts: readonly AttemptRecord[],
  answered?: { provider: string | null; model: string | null; usage: Usage | undefined; failed?: boolean },
): number | null {
  let total = 0;
  let unpriced = false;
  for (const attempt of attempts) {
    const cost = attemptCost(prices, attempt);
    if (cost !== null) total += cost;
    else if (attempt.outcome.ok && !attempt.outcome.usage) unpriced = true;
    else return null;
  }
  // A call refused before it reached a provider (its config, the gateway's own checks) made no attempt and
  // cost nothing.
  if (!unpriced) return total;
  // Only the last answered attempt's usage is the relayed body's.
  const relayed = attempts.findLast((attempt) => attempt.outcome.ok);
  const options = { tier: relayed && servedTier(relayed) };
  const last = !answered
    ? null
    : answered.failed === true && !answered.usage
      ? 0
      : answerCost(prices, answered.provider, answered.model, answered.usage, options);
  return last === null ? null : total + last;
}
