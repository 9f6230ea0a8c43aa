import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatCost, usageCost } from '../../src/observability/pricing/cost.js';
import { loadPriceTable, normaliseModel, PriceTable } from '../../src/observability/pricing/price-table.js';

const shipped = loadPriceTable(undefined);

function priceOf(provider: string, model: string) {
  const match = shipped.lookup(provider, model);
  if (!match) throw new Error(`no price for ${provider} ${model}`);
  return match;
}

describe('price table lookup', () => {
  it('finds a model by its exact name, or by the longest name it starts with followed by a version', () => {
    expect(priceOf('openai', 'gpt-4o').price.input).toBe(2.5);
    expect(priceOf('openai', 'gpt-4o-2024-08-06').price.input).toBe(2.5);
    // gpt-4o's first snapshot kept its own, higher, prices.
    expect(priceOf('openai', 'gpt-4o-2024-05-13').price).toMatchObject({ input: 5, output: 15 });
    expect(priceOf('openai', 'gpt-4o-2024-05-13').price.cache_read).toBeUndefined();
    expect(priceOf('openai', 'gpt-4o-mini-2024-07-18').price.input).toBe(0.15);
    // gpt-4 is not a prefix of gpt-4o: a name must be followed by a version, not more of a name.
    expect(priceOf('openai', 'gpt-4-0613').price.input).toBe(30);
    expect(shipped.lookup('openai', 'gpt-4.5-preview')).toBeUndefined();
    expect(shipped.lookup('openai', 'gpt-4oops')).toBeUndefined();
    expect(shipped.lookup('openai', 'my-fine-tune')).toBeUndefined();
    expect(shipped.lookup('nobody', 'gpt-4o')).toBeUndefined();
  });

  it('takes dates, numbers, revisions, latest, preview, exp and beta as versions, and no other word', () => {
    expect(priceOf('openai', 'gpt-4o-audio-preview-2024-12-17').price.input_audio).toBe(40);
    expect(priceOf('openai', 'o1-preview').price.input).toBe(15);
    expect(priceOf('anthropic', 'claude-3-5-haiku-latest').price.input).toBe(0.8);
    expect(priceOf('cohere', 'command-r-plus-08-2024').price.input).toBe(2.5);
    expect(priceOf('google', 'gemini-2.5-pro-exp-03-25').price.input).toBe(1.25);
    expect(priceOf('x-ai', 'grok-3-mini-beta').price.input).toBe(0.3);
    // Models of a family at the family's price have entries of their own.
    expect(priceOf('openai', 'gpt-5-chat-latest').price.input).toBe(1.25);
    expect(priceOf('openai', 'gpt-5-codex').price.input).toBe(1.25);
    expect(priceOf('cohere', 'command-a-reasoning-08-2025').price.input).toBe(2.5);
    expect(priceOf('cohere', 'command-a-vision-07-2025').price.input).toBe(2.5);
    expect(priceOf('bedrock', 'anthropic.claude-3-haiku-20240307-v1:0:200k').price.input).toBe(0.25);
    // A single digit right after the name is a minor version, another model at another price: Claude Opus
    // 5.5 ($4 / $20) is not Claude Opus 5 ($5 / $25), nor Sonnet 5.5 Sonnet 5. Dates still follow one.
    expect(priceOf('anthropic', 'claude-opus-4-7-20260301').price.input).toBe(5);
    expect(priceOf('anthropic', 'claude-sonnet-4-20250514').price.input).toBe(3);
    for (const [provider, model] of [
      ['anthropic', 'claude-opus-5-5'],
      ['anthropic', 'claude-sonnet-5-5'],
      ['anthropic', 'claude-fable-5-2'],
      ['bedrock', 'us.anthropic.claude-opus-5-5-v1:0'],
      ['openai', 'o1-pro-2025-03-19'],
      ['openai', 'gpt-4o-realtime-preview'],
      ['openai', 'gpt-4o-mini-search-preview'],
      ['openai', 'gpt-4-32k'],
      ['google', 'gemini-1.5-flash-8b'],
      ['x-ai', 'grok-4-fast-reasoning'],
    ] as const) {
      expect(shipped.lookup(provider, model), model).toBeUndefined();
    }
  });

  it('prices Claude Opus 4.6 and later at their own prices, not as the Claude 4 they start with', () => {
    // Anthropic's price page: Opus 4.6, 4.7, 4.8 and 5 at $5 / $25 (Opus 4 is $15 / $75), Sonnet 4.6
    // flat at $3 / $15 over its whole window (Sonnet 4's prompts above 200k cost $6 / $22.50).
    const opus = { input: 5, cache_write: 6.25, cache_write_1h: 10, cache_read: 0.5, output: 25 };
    for (const model of ['claude-opus-4-6', 'claude-opus-4-7', 'claude-opus-4-8', 'claude-opus-5']) {
      expect(priceOf('anthropic', model).price, model).toEqual(opus);
    }
    expect(priceOf('bedrock', 'us.anthropic.claude-opus-4-6-v1').price.input).toBe(5);
    expect(priceOf('vertex-ai', 'claude-opus-4-7@20260301').price.output).toBe(25);
    expect(priceOf('anthropic', 'claude-sonnet-4-6').price).toEqual({
      input: 3,
      cache_write: 3.75,
      cache_write_1h: 6,
      cache_read: 0.3,
      output: 15,
    });
    expect(priceOf('anthropic', 'claude-sonnet-5').price).toMatchObject({
      input: 2,
      cache_read: 0.2,
      output: 10,
    });
    expect(priceOf('anthropic', 'claude-fable-5').price).toMatchObject({
      input: 10,
      cache_read: 1,
      output: 50,
    });
    expect(priceOf('anthropic', 'claude-fable-5-1').price).toMatchObject({
      input: 10,
      cache_read: 0.25,
      output: 50,
    });
  });

  it("prices DeepSeek's current models at their peak rates, and not the retired deepseek-chat and deepseek-reasoner", () => {
    // DeepSeek's price page: deepseek-flash (the legacy deepseek-v4-flash names are served and billed as it)
    // and deepseek-v4-pro, peak rates; off-peak is half of them.
    const flash = { input: 0.3, cache_read: 0.006, output: 1.2 };
    expect(priceOf('deepseek', 'deepseek-flash').price).toEqual(flash);
    expect(priceOf('deepseek', 'deepseek-v4-flash').price).toEqual(flash);
    expect(priceOf('deepseek', 'deepseek-v4-flash-vision-exp').price).toEqual(flash);
    expect(priceOf('deepseek', 'deepseek-v4-pro').price).toEqual({
      input: 1.32,
      cache_read: 0.044,
      output: 3.96,
    });
    expect(shipped.lookup('deepseek', 'deepseek-chat')).toBeUndefined();
    expect(shipped.lookup('deepseek', 'deepseek-reasoner')).toBeUndefined();
  });

  it('reads Bedrock, Vertex AI and Gemini names, and shares tables between providers', () => {
    expect(normaliseModel('us.anthropic.claude-3-5-sonnet-20240620-v1:0')).toBe(
      'claude-3-5-sonnet-20240620-v1',
    );
    expect(normaliseModel('claude-3-5-sonnet-v2@20241022')).toBe('claude-3-5-sonnet-v2-20241022');
    expect(normaliseModel('models/gemini-2.0-flash')).toBe('gemini-2.0-flash');
    expect(priceOf('bedrock', 'us.anthropic.claude-3-5-haiku-20241022-v1:0').price.output).toBe(4);
    expect(priceOf('bedrock', 'amazon.nova-pro-v1:0').price.input).toBe(0.8);
    expect(priceOf('bedrock', 'amazon.titan-embed-text-v2:0').price.input).toBe(0.02);
    expect(priceOf('vertex-ai', 'claude-3-5-sonnet-v2@20241022').price.input).toBe(3);
    expect(priceOf('vertex-ai', 'gemini-2.5-flash').price.output).toBe(2.5);
    expect(priceOf('google', 'models/gemini-2.5-flash-lite-preview-06-17').price.input).toBe(0.1);
    expect(priceOf('azure-openai', 'gpt-4o-2024-11-20').price.input).toBe(2.5);
  });
});

describe('Azure AI (Foundry model inference)', () => {
  it("is unpriced, as Azure bills its models at its own prices, not at their vendors' list prices", () => {
    for (const model of ['gpt-4o', 'mistral-large', 'command-r-plus', 'deepseek-v4-pro', 'grok-4']) {
      expect(shipped.lookup('azure-ai', model), model).toBeUndefined();
    }
  });
});

describe('usage cost', () => {
  const million = 1_000_000;

  it('prices prompt and completion tokens', () => {
    const cost = usageCost(priceOf('openai', 'gpt-4o'), {
      prompt_tokens: million,
      completion_tokens: million,
      total_tokens: 2 * million,
    });
    expect(cost).toBeCloseTo(12.5, 10);
  });

  it('prices cache reads and writes apart from the rest of the prompt', () => {
    // Anthropic: 100 fresh, 1,000 written to the cache, 2,000 read from it; 50 out.
    const cost = usageCost(priceOf('anthropic', 'claude-3-5-haiku-20241022'), {
      prompt_tokens: 3100,
      completion_tokens: 50,
      total_tokens: 3150,
      prompt_tokens_details: { cached_tokens: 2000, cache_write_tokens: 1000 },
    });
    expect(cost).toBeCloseTo((100 * 0.8 + 1000 * 1 + 2000 * 0.08 + 50 * 4) / million, 12);
  });

  it('prices reasoning and audio tokens inside the totals at their own rates', () => {
    const audio = usageCost(priceOf('openai', 'gpt-4o-audio-preview-2024-12-17'), {
      prompt_tokens: 1000,
      completion_tokens: 500,
      total_tokens: 1500,
      prompt_tokens_details: { audio_tokens: 400 },
      completion_tokens_details: { audio_tokens: 300 },
    });
    expect(audio).toBeCloseTo((600 * 2.5 + 400 * 40 + 200 * 10 + 300 * 80) / million, 12);
    const reasoning = usageCost(
      { price: { input: 1, output: 4, reasoning: 8 }, batchDiscount: 0, flexDiscount: 0, priorityPremium: 0 },
      {
        prompt_tokens: 10,
        completion_tokens: 100,
        total_tokens: 110,
        completion_tokens_details: { reasoning_tokens: 60 },
      },
    );
    expect(reasoning).toBeCloseTo((10 * 1 + 40 * 4 + 60 * 8) / million, 12);
  });

  it("prices tokens served from Vertex AI's Provisioned Throughput at 0, and still adds per-use tool fees", () => {
    const usage = {
      prompt_tokens: 1000,
      completion_tokens: 100,
      total_tokens: 1100,
      server_tool_use: { grounded_prompts: 1 },
    };
    const match = {
      price: { input: 0.3, output: 2.5, tool_fees: { grounded_prompt: 35 } },
      batchDiscount: 0.5,
      flexDiscount: 0.5,
      priorityPremium: 0,
    };
    expect(usageCost(match, { ...usage, traffic_type: 'PROVISIONED_THROUGHPUT' })).toBeCloseTo(35 / 1000, 12);
    // Overflow to pay-as-you-go, and Vertex's other traffic types, are billed per token.
    expect(usageCost(match, { ...usage, traffic_type: 'ON_DEMAND' })).toBeCloseTo(
      (1000 * 0.3 + 100 * 2.5) / million + 35 / 1000,
      12,
    );
  });

  it("prices Vertex AI's Priority and Flex PayGo traffic on the priority and flex tiers", () => {
    const usage = { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 };
    const standard = (1000 * 0.3 + 100 * 2.5) / million;
    const flash = priceOf('vertex-ai', 'gemini-2.5-flash');
    // Vertex AI's Flex PayGo is half the standard price; the shipped table has no Priority prices for it.
    expect(usageCost(flash, { ...usage, traffic_type: 'ON_DEMAND_FLEX' })).toBeCloseTo(standard / 2, 12);
    expect(usageCost(flash, { ...usage, traffic_type: 'ON_DEMAND_PRIORITY' })).toBeCloseTo(standard, 12);
    const own = {
      ...flash,
      price: { ...flash.price, service_tiers: { priority: { input: 0.6, output: 5 } } },
    };
    expect(usageCost(own, { ...usage, traffic_type: 'ON_DEMAND_PRIORITY' })).toBeCloseTo(
      (1000 * 0.6 + 100 * 5) / million,
      12,
    );
    // What the answer says served it wins over another tier it named; a provider batch's line is billed as one.
    const priority = { ...usage, traffic_type: 'ON_DEMAND_PRIORITY' };
    expect(usageCost(own, priority, { tier: 'default' })).toBeCloseTo((1000 * 0.6 + 100 * 5) / million, 12);
    expect(usageCost(own, priority, { tier: 'batch' })).toBeCloseTo(standard / 2, 12);
  });

  it('takes the long-context prices for a prompt above the tier, and the batch discount for batch lines', () => {
    const gemini = priceOf('google', 'gemini-2.5-pro');
    const usage = (prompt: number) => ({
      prompt_tokens: prompt,
      completion_tokens: 1000,
      total_tokens: prompt + 1000,
    });
    expect(usageCost(gemini, usage(200_000))).toBeCloseTo((200_000 * 1.25 + 1000 * 10) / million, 12);
    expect(usageCost(gemini, usage(200_001))).toBeCloseTo((200_001 * 2.5 + 1000 * 15) / million, 12);
    expect(usageCost(gemini, usage(1000), { tier: 'batch' })).toBeCloseTo(
      ((1000 * 1.25 + 1000 * 10) / million) * 0.5,
      12,
    );
  });

  it('prices the Gemini 3 Pro previews on Google and Vertex AI, at their long-context prices above 200k', () => {
    // ai.google.dev, Gemini 3 developer guide: $2 / $12 up to 200k prompt tokens, $4 / $18 above; cache
    // reads at 90% off the input price (ai.google.dev: Optimization).
    const usage = (prompt: number) => ({
      prompt_tokens: prompt,
      completion_tokens: 1000,
      total_tokens: prompt + 1000,
      prompt_tokens_details: { cached_tokens: 50_000 },
    });
    for (const [provider, model] of [
      ['google', 'gemini-3.1-pro-preview'],
      ['google', 'models/gemini-3-pro-preview'],
      ['vertex-ai', 'publishers/google/models/gemini-3.1-pro-preview'],
      ['vertex-ai', 'gemini-3-pro-preview'],
    ] as const) {
      const pro = priceOf(provider, model);
      expect(usageCost(pro, usage(200_000)), model).toBeCloseTo(
        (150_000 * 2 + 50_000 * 0.2 + 1000 * 12) / million,
        12,
      );
      expect(usageCost(pro, usage(200_001)), model).toBeCloseTo(
        (150_001 * 4 + 50_000 * 0.4 + 1000 * 18) / million,
        12,
      );
    }
    // Another word is another model: the custom-tools endpoint and the image model are priced apart.
    expect(shipped.lookup('google', 'gemini-3.1-pro-preview-customtools')).toBeUndefined();
    expect(shipped.lookup('google', 'gemini-3-pro-image-preview')).toBeUndefined();
  });

  it('prices Gemini 3.1 Flash-Lite, its preview too, with its audio input apart', () => {
    // ai.google.dev, Gemini 3 developer guide: $0.25 text, image and video, $0.50 audio, $1.50 out.
    const lite = { input: 0.25, input_audio: 0.5, cache_read: 0.025, output: 1.5 };
    expect(priceOf('google', 'gemini-3.1-flash-lite').price).toEqual(lite);
    expect(priceOf('google', 'gemini-3.1-flash-lite-preview').price).toEqual(lite);
    expect(priceOf('vertex-ai', 'gemini-3.1-flash-lite-preview').price).toEqual(lite);
  });

  it("prices a service tier at the model's own prices for it, else at the provider's discount for it", () => {
    const usage = {
      prompt_tokens: 1000,
      completion_tokens: 100,
      total_tokens: 1100,
      prompt_tokens_details: { cached_tokens: 400 },
    };
    const mini = priceOf('openai', 'gpt-4o-mini-2024-07-18');
    // openai.com, Priority processing: gpt-4o-mini $0.25 in, $0.125 cached, $1.00 out.
    expect(usageCost(mini, usage, { tier: 'priority' })).toBeCloseTo(
      (600 * 0.25 + 400 * 0.125 + 100 * 1) / million,
      12,
    );
    const standard = (600 * 0.15 + 400 * 0.075 + 100 * 0.6) / million;
    expect(usageCost(mini, usage, { tier: 'default' })).toBeCloseTo(standard, 12);
    expect(usageCost(mini, usage, { tier: 'flex' })).toBeCloseTo(standard / 2, 12);
    expect(usageCost(mini, usage, { tier: 'batch' })).toBeCloseTo(standard / 2, 12);
    // A model's own tier prices win over the provider's discount.
    const own = {
      price: { input: 1, output: 4, service_tiers: { flex: { input: 0.4, output: 1 } } },
      batchDiscount: 0.5,
      flexDiscount: 0.5,
      priorityPremium: 0,
    };
    expect(
      usageCost(own, { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 }, { tier: 'flex' }),
    ).toBeCloseTo((10 * 0.4 + 10 * 1) / million, 12);
  });

  it("adds a server tool's fee per use (per 1,000 in the table) to the tokens' price", () => {
    const match = {
      price: { input: 3, output: 15, tool_fees: { web_search: 10 } },
      batchDiscount: 0.5,
      flexDiscount: 0,
      priorityPremium: 0,
    };
    const usage = {
      prompt_tokens: 1000,
      completion_tokens: 100,
      total_tokens: 1100,
      server_tool_use: { web_search_requests: 2, web_fetch_requests: 3 },
    };
    // Two searches at $10 per 1,000; the fetches have no fee.
    expect(usageCost(match, usage)).toBeCloseTo((1000 * 3 + 100 * 15) / million + 0.02, 12);
    // A batch's discount is the tokens', not the searches'.
    expect(usageCost(match, usage, { tier: 'batch' })).toBeCloseTo(
      (1000 * 3 + 100 * 15) / million / 2 + 0.02,
      12,
    );
  });

  it("prices Anthropic's web searches at $10 per 1,000 and its web fetches at their tokens alone", () => {
    const usage = {
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
      server_tool_use: { web_search_requests: 3, web_fetch_requests: 2 },
    };
    // platform.claude.com, Web search tool (Usage and pricing): $10 per 1,000 searches, plus tokens.
    expect(usageCost(shipped.lookup('anthropic', 'claude-sonnet-4-5')!, usage)).toBeCloseTo(0.03, 12);
    // A server tool's fee is the answering provider's: Vertex AI's for Claude's searches is in no page read.
    expect(usageCost(shipped.lookup('vertex-ai', 'claude-sonnet-4-5@20250929')!, usage)).toBe(0);
  });

  it("prices OpenAI's web search tool calls at $10 per 1,000", () => {
    const usage = {
      prompt_tokens: 1000,
      completion_tokens: 100,
      total_tokens: 1100,
      server_tool_use: { web_search_requests: 3 },
    };
    // developers.openai.com, Pricing (Built-in tools): web search, all models, $10.00 / 1k calls plus its
    // content tokens at the model's rates (in the usage already).
    expect(usageCost(priceOf('openai', 'gpt-5-mini'), usage)).toBeCloseTo(
      (1000 * 0.25 + 100 * 2) / million + 0.03,
      12,
    );
    expect(usageCost(priceOf('openai', 'gpt-4.1'), usage)).toBeCloseTo(
      (1000 * 2 + 100 * 8) / million + 0.03,
      12,
    );
  });

  it('formats dollars without an exponent or trailing zeros', () => {
    expect(formatCost(0)).toBe('0');
    expect(formatCost(1.5e-7)).toBe('0.00000015');
    expect(formatCost(12.5)).toBe('12.5');
    expect(formatCost(100)).toBe('100');
  });
});

describe('a deployment price file', () => {
  function file(content: unknown): string {
    const path = join(mkdtempSync(join(tmpdir(), 'prices-')), 'prices.json');
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  }

  it('adds and replaces models and keeps the rest of the shipped table', () => {
    const table = loadPriceTable(
      file({
        providers: {
          openai: { models: { 'gpt-4o': { input: 2, output: 8 }, 'my-fine-tune': { input: 3, output: 12 } } },
          'openai-compatible': { models: { 'llama-local': { input: 0, output: 0 } } },
        },
      }),
    );
    expect(table.lookup('openai', 'gpt-4o-2024-08-06')?.price).toEqual({ input: 2, output: 8 });
    expect(table.lookup('openai', 'my-fine-tune')?.price.output).toBe(12);
    expect(table.lookup('openai', 'gpt-4o-mini')?.price.input).toBe(0.15);
    expect(table.lookup('openai', 'gpt-4o')?.batchDiscount).toBe(0.5);
    expect(table.lookup('openai-compatible', 'llama-local')?.price.input).toBe(0);
    expect(table.lookup('azure-openai', 'gpt-4o')?.price.input).toBe(2);
  });

  it("lays a model's service-tier prices over the shipped ones", () => {
    const table = loadPriceTable(
      file({
        providers: {
          openai: {
            models: {
              'gpt-5': { input: 1.25, output: 10, service_tiers: { priority: { input: 2.5, output: 20 } } },
            },
          },
        },
      }),
    );
    const usage = { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 };
    expect(usageCost(table.lookup('openai', 'gpt-5-2025-08-07')!, usage, { tier: 'priority' })).toBeCloseTo(
      (1000 * 2.5 + 100 * 20) / 1e6,
      12,
    );
    expect(() =>
      loadPriceTable(
        file({ providers: { openai: { models: { x: { input: 1, service_tiers: { fast: {} } } } } } }),
      ),
    ).toThrow(/service_tiers/);
  });

  it("takes a provider's server-tool fees for its models, a model's own over them", () => {
    const table = loadPriceTable(
      file({
        providers: {
          anthropic: {
            tool_fees: { web_search: 10, web_fetch: 1 },
            models: { 'claude-own': { input: 1, output: 5, tool_fees: { web_search: 20 } } },
          },
        },
      }),
    );
    const usage = {
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
      server_tool_use: { web_search_requests: 1, web_fetch_requests: 1 },
    };
    expect(usageCost(table.lookup('anthropic', 'claude-sonnet-4-5')!, usage)).toBeCloseTo(0.011, 12);
    expect(usageCost(table.lookup('anthropic', 'claude-own')!, usage)).toBeCloseTo(0.021, 12);
  });

  it('is refused with the offending field named, or when it is not JSON', () => {
    expect(() => loadPriceTable(file({ providers: { openai: { models: { x: { input: -1 } } } } }))).toThrow(
      /prices\.providers\.openai\.models\.x\.input/,
    );
    expect(() => loadPriceTable(file({ providers: { openai: { modles: {} } } }))).toThrow(/modles/);
    expect(() => loadPriceTable(file('{ nope'))).toThrow(/GATEWAY_PRICES_FILE .* cannot be read as JSON/);
  });

  it('a table with no entry for a provider knows none of its models', () => {
    expect(new PriceTable({ providers: {} }).lookup('openai', 'gpt-4o')).toBeUndefined();
  });
});
