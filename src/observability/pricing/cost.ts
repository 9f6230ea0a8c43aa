/**
 * A call's cost from its usage (OpenAI's shape, which every adapter reports) and its model's prices.
 * `prompt_tokens` and `completion_tokens` are totals; the details say which of them are priced apart:
 * cache reads and writes (those kept an hour apart), audio and image tokens of the prompt; reasoning and
 * audio tokens of the completion. What is left of each total is priced as text. Server tools' uses the
 * provider bills apart (web searches) are added at their fees. Tokens served from capacity paid for ahead
 * (Vertex AI's Provisioned Throughput, the usage's `traffic_type`) cost nothing per token; those served on
 * Vertex AI's Priority or Flex PayGo (also its `traffic_type`) are priced on the `priority` or `flex` tier.
 */
import type { Usage } from '../../core/openai-types.js';
import { PRICED_TIERS, type ModelPrice, type PricedTier, type PriceMatch } from './price-table.js';

const PER_TOKEN = 1e-6;

/** Vertex AI's `trafficType` for a call served from the organisation's Provisioned Throughput, a fixed-price
 * subscription: its tokens are not billed one by one (overflow to pay-as-you-go says `ON_DEMAND`). */
export const PROVISIONED_THROUGHPUT = 'PROVISIONED_THROUGHPUT';

export interface CostOptions {
  /** The service tier that served the call (an answer's `service_tier`, `batch` for a provider batch's
   * lines): `flex`, `priority` and `batch` are priced at the model's own prices for the tier, else with the
   * provider's discount (or premium) for it; any other (`default`, `auto`, none) at the model's prices. A
   * usage whose `traffic_type` names a tier (Vertex AI's `ON_DEMAND_PRIORITY`, `ON_DEMAND_FLEX`) is priced on
   * that one, unless this is `batch`. */
  tier?: string;
}

/** Dollars. */
export function usageCost(match: PriceMatch, usage: Usage, options: CostOptions = {}): number {
  if (usage.traffic_type === PROVISIONED_THROUGHPUT) return toolFees(match, usage);
  const prompt = usage.prompt_tokens ?? 0;
  // A provider batch's line is billed as one, whatever its answer's traffic type says.
  const named = pricedTier(options.tier);
  const tier = named === 'batch' ? named : (trafficTier(usage.traffic_type) ?? named);
  const own = tier && match.price.service_tiers?.[tier];
  const long = match.price.long_context;
  const price: ModelPrice = own
    ? { ...match.price, ...own }
    : long && prompt > long.above_input_tokens
      ? { ...match.price, ...long }
      : match.price;
  const input = price.input ?? 0;
  const output = price.output ?? 0;

  const inDetails = usage.prompt_tokens_details;
  const cacheRead = inDetails?.cached_tokens ?? 0;
  const cacheWrite = inDetails?.cache_write_tokens ?? 0;
  const cacheWriteHour = Math.min(inDetails?.cache_write_1h_tokens ?? 0, cacheWrite);
  const audioIn = inDetails?.audio_tokens ?? 0;
  const imageIn = inDetails?.image_tokens ?? 0;
  const textIn = Math.max(0, prompt - cacheRead - cacheWrite - audioIn - imageIn);

  const completion = usage.completion_tokens ?? 0;
  const outDetails = usage.completion_tokens_details;
  const reasoning = outDetails?.reasoning_tokens ?? 0;
  const audioOut = outDetails?.audio_tokens ?? 0;
  const textOut = Math.max(0, completion - reasoning - audioOut);

  const dollars =
    PER_TOKEN *
    (textIn * input +
      cacheRead * (price.cache_read ?? input) +
      (cacheWrite - cacheWriteHour) * (price.cache_write ?? input) +
      cacheWriteHour * (price.cache_write_1h ?? price.cache_write ?? input) +
      audioIn * (price.input_audio ?? input) +
      imageIn * (price.input_image ?? input) +
      textOut * output +
      reasoning * (price.reasoning ?? output) +
      audioOut * (price.output_audio ?? output));
  return dollars * tierFactor(match, tier, Boolean(own)) + toolFees(match, usage);
}

/** What the provider's discount (batch, flex) or premium (priority) for the tier makes of the price of a
 * model without its own prices for it. */
function tierFactor(match: PriceMatch, tier: PricedTier | undefined, ownPrices: boolean): number {
  if (ownPrices) return 1;
  switch (tier) {
    case 'batch':
      return 1 - match.batchDiscount;
    case 'flex':
      return 1 - match.flexDiscount;
    case 'priority':
      return 1 + match.priorityPremium;
    default:
      return 1;
  }
}

/** Dollars of the server tools' uses the answer reports, at the table's fees per 1,000 (none when absent). */
function toolFees(match: PriceMatch, usage: Usage): number {
  const uses = usage.server_tool_use;
  if (!uses) return 0;
  const fees = { ...match.toolFees, ...match.price.tool_fees };
  return (
    ((uses.web_search_requests ?? 0) * (fees.web_search ?? 0) +
      (uses.web_fetch_requests ?? 0) * (fees.web_fetch ?? 0) +
      (uses.grounded_prompts ?? 0) * (fees.grounded_prompt ?? 0)) /
    1000
  );
}

/** The tier Vertex AI says served the call, its answer's `trafficType`: Priority PayGo and Flex PayGo are
 * billed on tiers of their own (`ON_DEMAND` is standard pay-as-you-go). */
function trafficTier(trafficType: string | undefined): PricedTier | undefined {
  switch (trafficType) {
    case 'ON_DEMAND_PRIORITY':
      return 'priority';
    case 'ON_DEMAND_FLEX':
      return 'flex';
    default:
      return undefined;
  }
}

function pricedTier(tier: string | undefined): PricedTier | undefined {
  return (PRICED_TIERS as readonly string[]).includes(tier ?? '') ? (tier as PricedTier) : undefined;
}

/** A cost as a header or a record shows it: dollars, at most ten decimals, no exponent, no trailing zeros. */
export function formatCost(dollars: number): string {
  const text = dollars.toFixed(10).replace(/\.?0+$/, '');
  return text === '' || text === '-0' ? '0' : text;
}
