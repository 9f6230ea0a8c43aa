/**
 * Cost end to end: the `openai` SDK through a real gateway to fakes; every answer's cost checked against
 * the usage the provider reported, priced by hand from the shipped table (or a deployment's file), in the
 * `x-gateway-cost` header, the log records and `GET /metrics`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  chatLine,
  contentLines,
  createBatch,
  finished,
  jsonl,
  sdk,
  upload,
  waitFor,
} from '../batches/support.js';
import { client, logsOf, target, traceHeaders, userMessage } from '../routing/support.js';

const ANTHROPIC_KEY = 'sk-ant-cost';
const PER_MILLION = 1e-6;

let gateway: TestGateway;
let openai: FakeUpstream;
let anthropic: FakeAnthropic;

beforeAll(async () => {
  openai = await startFakeOpenAI({ name: 'priced' });
  anthropic = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
  const dir = mkdtempSync(join(tmpdir(), 'prices-'));
  const pricesFile = join(dir, 'prices.json');
  // A deployment's own model, priced by its file; the rest of the shipped table stays.
  writeFileSync(
    pricesFile,
    JSON.stringify({ providers: { openai: { models: { 'house-model': { input: 7, output: 21 } } } } }),
  );
  gateway = await startGateway({ env: { GATEWAY_PRICES_FILE: pricesFile } });
});

afterAll(async () => {
  await gateway?.close();
  await openai?.close();
  await anthropic?.close();
});

function gpt4oMini(usage: { prompt_tokens: number; completion_tokens: number }): number {
  return (usage.prompt_tokens * 0.15 + usage.completion_tokens * 0.6) * PER_MILLION;
}

describe('cost', () => {
  it('prices a JSON answer in x-gateway-cost and its log record', async () => {
    const { traceId, headers } = traceHeaders();
    const { data, response } = await client(gateway, target(openai), headers)
      .chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('what does this cost?') })
      .withResponse();
    const expected = gpt4oMini(data.usage!);
    expect(expected).toBeGreaterThan(0);
    expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(expected, 10);
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.cost).toBeCloseTo(expected, 12);
  });

  it('prices a stream from its usage in the log record (its headers went out before the usage came)', async () => {
    const { traceId, headers } = traceHeaders();
    const { data: stream, response } = await client(gateway, target(openai), headers)
      .chat.completions.create({
        model: 'gpt-4o-mini-2024-07-18',
        messages: userMessage('stream the cost'),
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    expect(response.headers.get('x-gateway-cost')).toBeNull();
    let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.cost).toBeCloseTo(gpt4oMini(usage!), 12);
  });

  it('prices each line of a managed batch, and sums them on the batch', async () => {
    const batches = sdk(gateway.url, gateway.adminKey, target(openai));
    const lines = Array.from({ length: 6 }, (_, i) =>
      chatLine(`cost-${i}`, 'gpt-4o-mini', `line ${'x '.repeat(i)}`),
    );
    const file = await upload(batches, jsonl(lines));
    // The lines' calls carry the trace id of the request that created the batch.
    const { traceId, headers } = traceHeaders();
    const created = await createBatch(batches, file.id, {}, headers);
    const batch = await waitFor(batches, created.id, finished, 30_000);
    expect(batch.request_counts).toEqual({ total: 6, completed: 6, failed: 0 });

    const output = await contentLines(batches, batch.output_file_id);
    const expected = output.map((line) =>
      gpt4oMini(
        (line.response!.body as { usage: { prompt_tokens: number; completion_tokens: number } }).usage,
      ),
    );
    expect(new Set(expected).size).toBe(6);
    // Each line's call is logged like any other, with its cost.
    const records = await logsOf(gateway, traceId, 6);
    const byCost = (a: number, b: number) => a - b;
    expect(records.map((record) => record.cost!).sort(byCost)).toEqual(
      expected.sort(byCost).map((cost) => expect.closeTo(cost, 12)),
    );
    const { response } = await batches.batches.retrieve(batch.id).withResponse();
    const sum = expected.reduce((total, cost) => total + cost, 0);
    expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(sum, 10);
  });

  it('sums the attempts of a fallback, each at its own provider and model, and a failed attempt costs nothing', async () => {
    anthropic.enqueue({
      kind: 'json',
      body: {
        id: 'msg_cost',
        type: 'message',
        role: 'assistant',
        model: 'claude-3-5-haiku-20241022',
        content: [{ type: 'text', text: 'priced' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: {
          input_tokens: 100,
          cache_creation_input_tokens: 1000,
          cache_read_input_tokens: 2000,
          output_tokens: 50,
        },
      },
    });
    const { traceId, headers } = traceHeaders();
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        target(openai, { override_params: { model: 'fake-status-503' } }),
        {
          provider: 'anthropic',
          api_key: ANTHROPIC_KEY,
          custom_host: anthropic.url,
          override_params: { model: 'claude-3-5-haiku-20241022' },
        },
      ],
    };
    const { data, response } = await client(gateway, config, headers)
      .chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('fall back'), max_tokens: 100 })
      .withResponse();
    expect(response.headers.get('x-gateway-provider')).toBe('anthropic');
    // Cache writes and reads are priced apart: 100 fresh, 1,000 written, 2,000 read, 50 out.
    expect(data.usage?.prompt_tokens).toBe(3100);
    const expected = (100 * 0.8 + 1000 * 1 + 2000 * 0.08 + 50 * 4) * PER_MILLION;
    expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(expected, 12);
    const records = await logsOf(gateway, traceId, 3);
    const call = records.find((record) => !record.is_attempt)!;
    const attempts = records.filter((record) => record.is_attempt);
    expect(attempts.map((record) => [record.provider, record.status, record.cost])).toEqual([
      ['openai', 503, 0],
      ['anthropic', 200, expect.closeTo(expected, 12)],
    ]);
    expect(call.cost).toBeCloseTo(expected, 12);
  });

  it('a cache hit costs nothing; a model with no price has no cost; a deployment file prices its own', async () => {
    const cached = client(gateway, target(openai, { cache: { mode: 'simple' } }));
    const request = { model: 'gpt-4o-mini', messages: userMessage('cached cost') };
    const miss = await cached.chat.completions.create(request).withResponse();
    expect(Number(miss.response.headers.get('x-gateway-cost'))).toBeGreaterThan(0);
    const hit = await cached.chat.completions.create(request).withResponse();
    expect(hit.response.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(hit.response.headers.get('x-gateway-cost')).toBe('0');

    const { traceId, headers } = traceHeaders();
    const unknown = await client(gateway, target(openai), headers)
      .chat.completions.create({ model: 'someones-fine-tune', messages: userMessage('unpriced') })
      .withResponse();
    expect(unknown.response.headers.get('x-gateway-cost')).toBeNull();
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.cost).toBeNull();
    expect(record.prompt_tokens).toBeGreaterThan(0);

    const house = await client(gateway, target(openai))
      .chat.completions.create({ model: 'house-model', messages: userMessage('priced by the deployment') })
      .withResponse();
    const { usage } = house.data;
    expect(Number(house.response.headers.get('x-gateway-cost'))).toBeCloseTo(
      (usage!.prompt_tokens * 7 + usage!.completion_tokens * 21) * PER_MILLION,
      12,
    );
  });

  it('counts cost in gateway_cost_usd_total', async () => {
    const text = await (await fetch(`${gateway.origin}/metrics`)).text();
    const series = text
      .split('\n')
      .filter((line) => line.startsWith('gateway_cost_usd_total{') && line.includes('provider="anthropic"'));
    expect(series).toHaveLength(1);
    expect(Number(series[0].split(' ').at(-1))).toBeCloseTo(
      (100 * 0.8 + 1000 * 1 + 2000 * 0.08 + 50 * 4) * PER_MILLION,
      12,
    );
  });
});
