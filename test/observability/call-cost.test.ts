import { describe, expect, it } from 'vitest';
import { addUsage } from '../../src/gateway/add-usage.js';
import { attemptCost, callCost } from '../../src/gateway/call-cost.js';
import type { AttemptRecord } from '../../src/gateway/pipeline-types.js';
import { loadPriceTable, PriceTable } from '../../src/observability/pricing/price-table.js';

const prices = loadPriceTable(undefined);
const usage = { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 };
// gpt-4o-mini: $0.15 in, $0.60 out; priority $0.25 and $1.00 (openai.com, Priority processing).
const standard = (1000 * 0.15 + 100 * 0.6) / 1e6;
const priority = (1000 * 0.25 + 100 * 1) / 1e6;

function attempt(
  asked: string | undefined,
  answer: Record<string, unknown> | undefined,
  provider = 'openai',
  model = 'gpt-4o-mini',
): AttemptRecord {
  return {
    path: '/v1/chat/completions',
    provider,
    model,
    body: { model, ...(asked && { service_tier: asked }) },
    outcome: {
      ok: true,
      status: 200,
      streamed: answer === undefined,
      body: answer,
      usage,
      model,
      upstreamHeaders: {},
      ttfbMs: 1,
      malformedChunks: 0,
    },
    started: 0,
    ended: 1,
    retry: 0,
    cacheStatus: null,
    prompt: undefined,
    spanId: 'span',
  };
}

describe('an attempt priced by the service tier that served it', () => {
  it('takes the tier the answer names, not the one asked for', () => {
    expect(attemptCost(prices, attempt('priority', { service_tier: 'priority', usage }))).toBeCloseTo(
      priority,
      12,
    );
    // Priority asked for, served on the standard tier (OpenAI's ramp limit), is billed at standard rates.
    expect(attemptCost(prices, attempt('priority', { service_tier: 'default', usage }))).toBeCloseTo(
      standard,
      12,
    );
    // A project set to priority serves a call that asked for nothing on it.
    expect(attemptCost(prices, attempt(undefined, { service_tier: 'priority', usage }))).toBeCloseTo(
      priority,
      12,
    );
    expect(attemptCost(prices, attempt('flex', { service_tier: 'flex', usage }))).toBeCloseTo(
      standard / 2,
      12,
    );
  });

  it('takes no tier from the request when the answer names none: a provider may drop it', () => {
    expect(attemptCost(prices, attempt('priority', undefined))).toBeCloseTo(standard, 12);
    expect(attemptCost(prices, attempt('flex', undefined))).toBeCloseTo(standard, 12);
    // A chat call to Gemini asked for flex, which the translation does not send: served on the standard tier.
    const gemini = (1000 * 0.3 + 100 * 2.5) / 1e6;
    expect(
      attemptCost(prices, attempt('flex', { object: 'chat.completion' }, 'google', 'gemini-2.5-flash')),
    ).toBeCloseTo(gemini, 12);
  });
});

describe("an Anthropic answer's tier", () => {
  it('is read from its usage, and priced at the prices a price file gives the model for it', () => {
    const table = new PriceTable({
      providers: {
        anthropic: {
          models: {
            'claude-x': { input: 1, output: 5, service_tiers: { priority: { input: 2, output: 10 } } },
          },
        },
      },
    });
    const served = (tier: string): AttemptRecord =>
      attempt(
        undefined,
        { type: 'message', usage: { input_tokens: 1000, output_tokens: 100, service_tier: tier } },
        'anthropic',
        'claude-x',
      );
    expect(attemptCost(table, served('priority'))).toBeCloseTo((1000 * 2 + 100 * 10) / 1e6, 12);
    expect(attemptCost(table, served('standard'))).toBeCloseTo((1000 * 1 + 100 * 5) / 1e6, 12);
  });
});

describe("a Gemini answer's tier", () => {
  // gemini-2.5-flash: $0.30 in, $2.50 out; Flex at half (ai.google.dev: Optimization).
  const full = (1000 * 0.3 + 100 * 2.5) / 1e6;
  const served = (header: string | undefined, asked?: string): AttemptRecord => {
    const record = attempt(asked, { object: 'chat.completion', usage }, 'google', 'gemini-2.5-flash');
    if (!record.outcome.ok) throw new Error('not an answer');
    const upstreamHeaders: Record<string, string> = header ? { 'x-gemini-service-tier': header } : {};
    return { ...record, outcome: { ...record.outcome, upstreamHeaders } };
  };

  it('is read from its x-gemini-service-tier header', () => {
    expect(attemptCost(prices, served('flex'))).toBeCloseTo(full / 2, 12);
    expect(attemptCost(prices, served('SERVICE_TIER_FLEX'))).toBeCloseTo(full / 2, 12);
    // Asked for flex, which the chat translation does not send: served on the standard tier.
    expect(attemptCost(prices, served('standard', 'flex'))).toBeCloseTo(full, 12);
    expect(attemptCost(prices, served(undefined))).toBeCloseTo(full, 12);
  });

  it('is priced on Priority at twice its standard prices, the most of the 75% to 100% Google adds for it', () => {
    expect(attemptCost(prices, served('priority'))).toBeCloseTo(full * 2, 12);
    expect(attemptCost(prices, served('SERVICE_TIER_PRIORITY'))).toBeCloseTo(full * 2, 12);
    // A model's own Priority prices (a price file's) win over the premium.
    const table = new PriceTable({
      providers: {
        google: {
          priority_premium: 1,
          models: {
            'gemini-2.5-flash': {
              input: 0.3,
              output: 2.5,
              service_tiers: { priority: { input: 0.5, output: 4 } },
            },
          },
        },
      },
    });
    expect(attemptCost(table, served('priority'))).toBeCloseTo((1000 * 0.5 + 100 * 4) / 1e6, 12);
  });
});

describe('a pass-through answer', () => {
  it('is priced on the tier its relayed headers name (Gemini)', () => {
    const relayed = attempt(undefined, undefined, 'google', 'gemini-2.5-flash');
    if (!relayed.outcome.ok) throw new Error('not an answer');
    const outcome = {
      ...relayed.outcome,
      usage: undefined,
      upstreamHeaders: { 'x-gemini-service-tier': 'flex' },
    };
    const answered = { provider: 'google', model: 'gemini-2.5-flash', usage };
    // gemini-2.5-flash: $0.30 in, $2.50 out, Flex at half.
    expect(callCost(prices, [{ ...relayed, outcome }], answered)).toBeCloseTo(
      (1000 * 0.3 + 100 * 2.5) / 1e6 / 2,
      12,
    );
  });
});

describe('usage summed over the calls of one attempt (a fan-out of n, embeddings split into calls)', () => {
  const served = (trafficType: string) => ({ ...usage, traffic_type: trafficType });

  it('keeps the traffic type its calls share, and names none when one overflowed to pay-as-you-go', () => {
    const prepaid = addUsage(served('PROVISIONED_THROUGHPUT'), served('PROVISIONED_THROUGHPUT'));
    expect(prepaid).toMatchObject({ prompt_tokens: 2000, traffic_type: 'PROVISIONED_THROUGHPUT' });
    const mixed = addUsage(served('PROVISIONED_THROUGHPUT'), served('ON_DEMAND'));
    expect(mixed?.prompt_tokens).toBe(2000);
    expect(mixed?.traffic_type).toBeUndefined();
    expect(addUsage(served('PROVISIONED_THROUGHPUT'), usage)?.traffic_type).toBeUndefined();
  });
});
