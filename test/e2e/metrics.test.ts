/**
 * `GET /metrics` end to end: a real gateway, calls made with the `openai` SDK, the scrape parsed by a
 * Prometheus text-format parser, and every counter checked to move by what the calls did.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, target } from '../routing/support.js';

const TOKEN = 'metrics-token-0123456789';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'metered' });
  gateway = await startGateway({ env: { GATEWAY_METRICS_TOKEN: TOKEN } });
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

interface Scrape {
  text: string;
  families: ReturnType<typeof parsePrometheusTextFormat>;
}

async function scrape(): Promise<Scrape> {
  const response = await fetch(`${gateway.origin}/metrics`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  const text = await response.text();
  // The parser throws on any line that is not valid exposition format.
  return { text, families: parsePrometheusTextFormat(text) };
}

const SERIES = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * The sum of the series of `name` whose labels include `labels` (0 when there are none yet). Read from the
 * text: the parser above folds a histogram's labelled series into one, so `_count` series are read here.
 */
function value({ text }: Scrape, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const series = SERIES.exec(line);
    if (!series || series[1] !== name) continue;
    const found = Object.fromEntries([...(series[2] ?? '').matchAll(LABEL)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, wanted]) => found[key] === wanted)) total += Number(series[3]);
  }
  return total;
}

describe('GET /metrics', () => {
  it('needs the bearer token when one is set', async () => {
    const none = await fetch(`${gateway.origin}/metrics`);
    expect(none.status).toBe(401);
    const body = (await none.json()) as { error: { param: string } };
    expect(body.error.param).toBe('authorization');
    const wrong = await fetch(`${gateway.origin}/metrics`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    // An authentication scheme is named in any case.
    const lower = await fetch(`${gateway.origin}/metrics`, { headers: { authorization: `bearer ${TOKEN}` } });
    expect(lower.status).toBe(200);
  });

  it('counts calls, errors, tokens, cache results, retries, fallbacks and hooks as they happen', async () => {
    const before = await scrape();
    const ok = { endpoint: 'chat', provider: 'openai', model: 'gpt-4o-mini', status_class: '2xx' };
    const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'count me' }] };

    // What providers reported, summed as the metric should sum it.
    const spent = { prompt: 0, completion: 0 };
    const add = (usage: { prompt_tokens: number; completion_tokens: number } | null | undefined) => {
      spent.prompt += usage?.prompt_tokens ?? 0;
      spent.completion += usage?.completion_tokens ?? 0;
    };

    // Two plain calls, one of them streamed with usage.
    add((await client(gateway, target(fake)).chat.completions.create(chat)).usage);
    const stream = await client(gateway, target(fake)).chat.completions.create({
      ...chat,
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const chunk of stream) add(chunk.usage);

    // A cached call twice: a miss, then a hit.
    const cached = target(fake, { cache: { mode: 'simple' } });
    const cachedChat = { ...chat, messages: [{ role: 'user' as const, content: 'cache me' }] };
    add((await client(gateway, cached).chat.completions.create(cachedChat)).usage);
    await client(gateway, cached).chat.completions.create(cachedChat);

    // A failing call retried once, then a fallback from it to a working target.
    const failing = target(fake, { override_params: { model: 'fake-status-503' } });
    await expect(
      client(gateway, { ...failing, retry: { attempts: 1, on_status_codes: [503] } }).chat.completions.create(
        chat,
      ),
    ).rejects.toMatchObject({ status: 503 });
    const fellBack = await client(gateway, {
      strategy: { mode: 'fallback' },
      targets: [failing, target(fake)],
    }).chat.completions.create(chat);
    add(fellBack.usage);

    // A denying input guardrail.
    await expect(
      client(gateway, {
        ...target(fake),
        input_guardrails: [
          { id: 'no-count', deny: true, 'default.contains': { words: ['count'], operator: 'none' } },
        ],
      }).chat.completions.create(chat),
    ).rejects.toMatchObject({ status: 446 });

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) =>
      value(after, name, labels) - value(before, name, labels);

    // The two plain calls, the two cached ones and the fallback's answer.
    expect(moved('gateway_requests_total', ok)).toBe(5);
    expect(moved('gateway_request_duration_seconds_count', ok)).toBe(5);
    expect(moved('gateway_time_to_first_byte_seconds_count', ok)).toBe(1);
    // The cache hit made no upstream call.
    expect(moved('gateway_overhead_seconds_count', ok)).toBe(4);
    expect(moved('gateway_requests_total', { endpoint: 'chat', status_class: '5xx' })).toBe(1);
    expect(moved('gateway_errors_total', { endpoint: 'chat', status_class: '5xx' })).toBe(1);
    expect(moved('gateway_requests_total', { endpoint: 'chat', status_class: '4xx' })).toBe(1);
    expect(moved('gateway_errors_total', { endpoint: 'chat', code: 'hooks_failed' })).toBe(1);
    const tokens = { endpoint: 'chat', provider: 'openai', model: 'gpt-4o-mini' };
    expect(spent.prompt).toBeGreaterThan(0);
    expect(moved('gateway_tokens_total', { ...tokens, type: 'prompt' })).toBe(spent.prompt);
    expect(moved('gateway_tokens_total', { ...tokens, type: 'completion' })).toBe(spent.completion);
    expect(moved('gateway_cache_results_total', { endpoint: 'chat', result: 'miss' })).toBe(1);
    expect(moved('gateway_cache_results_total', { endpoint: 'chat', result: 'hit' })).toBe(1);
    expect(moved('gateway_retries_total', { endpoint: 'chat' })).toBe(1);
    expect(moved('gateway_fallbacks_total', { endpoint: 'chat' })).toBe(1);
    expect(moved('gateway_hooks_total', { event: 'beforeRequestHook', outcome: 'denied' })).toBe(1);
    const types = Object.fromEntries(after.families.map((family) => [family.name, family.type]));
    expect(types).toMatchObject({
      gateway_requests_total: 'COUNTER',
      gateway_request_duration_seconds: 'HISTOGRAM',
      gateway_overhead_seconds: 'HISTOGRAM',
      gateway_tokens_total: 'COUNTER',
      // Node.js process metrics come with them.
      process_cpu_seconds_total: 'COUNTER',
    });
  });

  it('counts a call whose model name is too long to be a label under other, keeping the scrape small', async () => {
    const before = await scrape();
    // A model of a caller's own invention, 200 KB long: as a label it would be written on every line of
    // every series of the call (some 80 of them) at every scrape, for good.
    for (const letter of ['a', 'b']) {
      await client(gateway, target(fake)).chat.completions.create({
        model: `made-up-${letter.repeat(200_000)}`,
        messages: [{ role: 'user' as const, content: 'long name' }],
      });
    }
    const after = await scrape();
    expect(after.text).not.toContain('made-up-');
    expect(after.text.length - before.text.length).toBeLessThan(100_000);
    const other = { endpoint: 'chat', provider: 'openai', model: 'other' };
    expect(
      value(after, 'gateway_requests_total', other) - value(before, 'gateway_requests_total', other),
    ).toBe(2);
  });
});

describe('rate-limit decisions', () => {
  it('are counted as the policies decide', async () => {
    const created = await fetch(`${gateway.url}/policies/rate-limits`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'one a minute for the metered user',
        conditions: [{ key: 'metadata.user', value: 'metered' }],
        group_by: [{ key: 'metadata.user' }],
        type: 'requests',
        unit: 'rpm',
        value: 1,
      }),
    });
    expect(created.status).toBe(200);
    const before = await scrape();
    const metered = client(gateway, target(fake), {
      'x-gateway-metadata': JSON.stringify({ user: 'metered' }),
    });
    const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'limited' }] };
    await metered.chat.completions.create(chat);
    await expect(metered.chat.completions.create(chat)).rejects.toMatchObject({ status: 429 });
    const after = await scrape();
    const moved = (decision: string) =>
      value(after, 'gateway_rate_limit_decisions_total', { decision }) -
      value(before, 'gateway_rate_limit_decisions_total', { decision });
    expect(moved('checked')).toBe(2);
    expect(moved('refused')).toBe(1);
    expect(moved('unavailable')).toBe(0);
  });
});

describe('GATEWAY_METRICS=off', () => {
  it('serves no /metrics', async () => {
    const off = await startGateway({ env: { GATEWAY_METRICS: 'off' } });
    try {
      const response = await fetch(`${off.origin}/metrics`);
      expect(response.status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
