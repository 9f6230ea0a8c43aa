/**
 * Each provider's usage as the gateway reports and prices it: the `openai` SDK through a real gateway to
 * fakes that answer with the providers' recorded wire shapes; the cost checked against the provider's own
 * billing terms and the shipped price table.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/server.js';
import { providerFixturesDir, readCohereJson } from '../fakes/cohere/fixtures.js';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startFakeCohere, type FakeCohere } from '../fakes/cohere/server.js';
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
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, logsOf, target, traceHeaders, userMessage } from '../routing/support.js';
import { startWireUpstream, type WireUpstream } from '../helpers/wire-upstream.js';

const PER_MILLION = 1e-6;

let gateway: TestGateway;
let cohere: FakeCohere;
let anthropic: FakeAnthropic;
let openai: FakeUpstream;
let bedrock: FakeBedrock;
let google: FakeGoogle;
/** Answers with the recorded sample named by the request's model: `<model>.json`, or `<model>.chunks.txt`
 * as server-sent events for a stream; or with the request's `answer`, when it has one (and its
 * `answerHeaders`). */
let recorded: WireUpstream;

function readRecorded(provider: string, name: string): string {
  return readFileSync(path.join(providerFixturesDir(provider), name), 'utf8');
}

beforeAll(async () => {
  cohere = await startFakeCohere();
  anthropic = await startFakeAnthropic({ apiKey: 'sk-ant-usage' });
  openai = await startFakeOpenAI({ name: 'usage' });
  bedrock = await startFakeBedrock();
  google = await startFakeGoogle();
  recorded = await startWireUpstream(({ body }) => {
    if (body.answer !== undefined) return { json: JSON.stringify(body.answer), headers: body.answerHeaders };
    const [provider, name] = (body.model as string).split('/') as [string, string];
    if (!body.stream) return { json: readRecorded(provider, `${name}.json`) };
    const lines = readRecorded(provider, `${name}.chunks.txt`).split('\n');
    return { events: lines.filter((line) => line.trim() !== '').map((data) => ({ data })), done: true };
  });
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await cohere?.close();
  await anthropic?.close();
  await openai?.close();
  await bedrock?.close();
  await google?.close();
  await recorded?.close();
});

describe('Cohere usage', () => {
  const config = () => ({ provider: 'cohere', api_key: cohere.apiKey, custom_host: cohere.url });
  // command-a: $2.50 in, $10 out per million billed tokens.
  const commandA = (input: number, output: number) => (input * 2.5 + output * 10) * PER_MILLION;

  it('reports and prices the billed units, not the tokens of the template Cohere wraps the prompt in', async () => {
    const recorded = readCohereJson('cohere-text') as {
      usage: {
        billed_units: { input_tokens: number; output_tokens: number };
        tokens: { input_tokens: number };
      };
    };
    const billed = recorded.usage.billed_units;
    expect(recorded.usage.tokens.input_tokens).toBeGreaterThan(billed.input_tokens);
    cohere.enqueue({ fixture: 'cohere-text' });
    const { traceId, headers } = traceHeaders();
    const { data, response } = await client(gateway, config(), headers)
      .chat.completions.create({ model: 'command-a-03-2025', messages: userMessage('capital of France?') })
      .withResponse();
    expect(data.usage).toEqual({
      prompt_tokens: billed.input_tokens,
      completion_tokens: billed.output_tokens,
      total_tokens: billed.input_tokens + billed.output_tokens,
    });
    const expected = commandA(billed.input_tokens, billed.output_tokens);
    expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(expected, 12);
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.cost).toBeCloseTo(expected, 12);
  });

  it('prices a stream from the billed units of its message-end', async () => {
    // Its message-end: billed 8 in, 50 out; tokens 1394 in (1360 of them cached), 54 out.
    cohere.enqueue({ fixture: 'cohere-reasoning' });
    const { traceId, headers } = traceHeaders();
    const stream = await client(gateway, config(), headers).chat.completions.create({
      model: 'command-a-03-2025',
      messages: userMessage('think'),
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: unknown;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage).toEqual({ prompt_tokens: 8, completion_tokens: 50, total_tokens: 58 });
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.cost).toBeCloseTo(commandA(8, 50), 12);
  });
});

describe('xAI usage', () => {
  const config = () => ({ provider: 'x-ai', api_key: 'xai-test', custom_host: recorded.url });
  /** xAI prices each answer itself, in ten-billionths of a dollar. */
  const ticks = (usage: unknown) => (usage as { cost_in_usd_ticks: number }).cost_in_usd_ticks * 1e-10;

  it('counts the reasoning tokens in completion_tokens, as OpenAI does, and prices them as xAI does', async () => {
    // xAI's chat usage leaves reasoning out of completion_tokens: 291 + 26 + 189 reasoning = 506 total.
    const sample = JSON.parse(readRecorded('xai', 'xai-tool-call.json')) as {
      usage: { total_tokens: number };
    };
    const { traceId, headers } = traceHeaders();
    const { data, response } = await client(gateway, config(), headers)
      .chat.completions.create({ model: 'xai/xai-tool-call', messages: userMessage('weather?') })
      .withResponse();
    expect(data.usage).toMatchObject({
      prompt_tokens: 291,
      completion_tokens: 215,
      total_tokens: 506,
      completion_tokens_details: { reasoning_tokens: 189 },
    });
    expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(ticks(sample.usage), 12);
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toMatchObject({ completion_tokens: 215, total_tokens: 506 });
    expect(record.cost).toBeCloseTo(ticks(sample.usage), 12);
  });

  it("does the same for a stream's usage chunk", async () => {
    const chunks = readRecorded('xai', 'xai-tool-call.chunks.txt').trim().split('\n');
    const last = JSON.parse(chunks.at(-1)!) as { usage: unknown };
    const { traceId, headers } = traceHeaders();
    const stream = await client(gateway, config(), headers).chat.completions.create({
      model: 'xai/xai-tool-call',
      messages: userMessage('weather?'),
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: unknown;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    // 291 + 26 + 196 reasoning = 513.
    expect(usage).toMatchObject({ prompt_tokens: 291, completion_tokens: 222, total_tokens: 513 });
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.cost).toBeCloseTo(ticks(last.usage), 12);
  });

  it('prices a pass-through answer the same way', async () => {
    const sample = JSON.parse(readRecorded('xai', 'xai-tool-call.json')) as { usage: unknown };
    const { traceId, headers } = traceHeaders();
    const response = await postWithConfig(
      gateway,
      '/recorded/chat',
      config(),
      { model: 'xai/xai-tool-call', messages: userMessage('weather?') },
      headers,
    );
    expect(response.status).toBe(200);
    // Relayed as xAI sent it.
    expect(await response.json()).toEqual(sample);
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toMatchObject({ endpoint: 'passthrough', completion_tokens: 215, total_tokens: 506 });
    expect(record.cost).toBeCloseTo(ticks(sample.usage), 12);
  });
});

describe('Anthropic usage', () => {
  const config = () => ({ provider: 'anthropic', api_key: 'sk-ant-usage', custom_host: anthropic.url });
  // 100 fresh, 2,000 read, 1,000 written to the cache: 400 for five minutes, 600 for an hour; 50 out.
  const usage = {
    input_tokens: 100,
    cache_creation_input_tokens: 1000,
    cache_read_input_tokens: 2000,
    cache_creation: { ephemeral_5m_input_tokens: 400, ephemeral_1h_input_tokens: 600 },
    output_tokens: 50,
  };
  // claude-3-5-haiku: $0.80 in; writes $1 for five minutes (1.25×), $1.60 for an hour (2×); reads $0.08;
  // $4 out.
  const expected = (100 * 0.8 + 400 * 1 + 600 * 1.6 + 2000 * 0.08 + 50 * 4) * PER_MILLION;
  const message = {
    id: 'msg_ttl',
    type: 'message',
    role: 'assistant',
    model: 'claude-3-5-haiku-20241022',
    content: [{ type: 'text', text: 'cached' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
  };

  it('prices cache writes of an hour at twice the input price, those of five minutes at 1.25 times', async () => {
    anthropic.enqueue({ kind: 'json', body: { ...message, usage } });
    const { traceId, headers } = traceHeaders();
    const { data, response } = await client(gateway, config(), headers)
      .chat.completions.create({ model: 'claude-3-5-haiku-20241022', messages: userMessage('hi') })
      .withResponse();
    expect(data.usage).toMatchObject({ prompt_tokens: 3100, completion_tokens: 50, total_tokens: 3150 });
    expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(expected, 12);
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.cost).toBeCloseTo(expected, 12);
  });

  it('does the same for a stream, whose message_start carries the writes', async () => {
    anthropic.enqueue({
      kind: 'stream',
      events: [
        {
          type: 'message_start',
          message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
        },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'cached' } },
        { type: 'content_block_stop', index: 0 },
        {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: 50 },
        },
        { type: 'message_stop' },
      ],
    });
    const { traceId, headers } = traceHeaders();
    const stream = await client(gateway, config(), headers).chat.completions.create({
      model: 'claude-3-5-haiku-20241022',
      messages: userMessage('hi'),
      stream: true,
    });
    for await (const _chunk of stream) {
      // read to the end
    }
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toMatchObject({ prompt_tokens: 3100, completion_tokens: 50 });
    expect(record.cost).toBeCloseTo(expected, 12);
  });
});

describe('a stream cut part way', () => {
  it('is priced from the usage the provider reported before it broke, as the provider bills it', async () => {
    // Anthropic counts the prompt in message_start: 1,000 tokens read, then the stream ends unfinished.
    anthropic.enqueue({
      kind: 'stream',
      events: [
        {
          type: 'message_start',
          message: {
            id: 'msg_cut',
            type: 'message',
            role: 'assistant',
            model: 'claude-3-5-haiku-20241022',
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 1000, output_tokens: 1 },
          },
        },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'half an ans' } },
      ],
    });
    const { traceId, headers } = traceHeaders();
    const config = { provider: 'anthropic', api_key: 'sk-ant-usage', custom_host: anthropic.url };
    const stream = await client(gateway, config, headers).chat.completions.create({
      model: 'claude-3-5-haiku-20241022',
      messages: userMessage('hi'),
      stream: true,
    });
    await expect(
      (async () => {
        for await (const _chunk of stream) {
          // read until it breaks
        }
      })(),
    ).rejects.toThrow();
    const [call] = await logsOf(gateway, traceId, 1);
    const expected = (1000 * 0.8 + 1 * 4) * PER_MILLION;
    expect(call).toMatchObject({ status: 502, prompt_tokens: 1000, completion_tokens: 1 });
    expect(call.cost).toBeCloseTo(expected, 12);
  });
});

describe('Bedrock usage', () => {
  it('prices Converse cache writes of an hour (cacheDetails) at twice the input price', async () => {
    bedrock.enqueue({
      kind: 'json',
      body: {
        output: { message: { role: 'assistant', content: [{ text: 'cached' }] } },
        stopReason: 'end_turn',
        usage: {
          inputTokens: 100,
          cacheReadInputTokens: 2000,
          cacheWriteInputTokens: 1000,
          cacheDetails: [
            { ttl: '1h', inputTokens: 600 },
            { ttl: '5m', inputTokens: 400 },
          ],
          outputTokens: 50,
          totalTokens: 3150,
        },
        metrics: { latencyMs: 10 },
      },
    });
    const { traceId, headers } = traceHeaders();
    const config = {
      provider: 'bedrock',
      cloudc_region: 'us-east-1',
      cloudc_access_key_id: 'AKIDFAKEBEDROCK',
      cloudc_secret_access_key: 'fake-secret-key',
      custom_host: bedrock.url,
    };
    const { data, response } = await client(gateway, config, headers)
      .chat.completions.create({
        model: 'anthropic.claude-3-5-haiku-20241022-v1:0',
        messages: userMessage('hi'),
      })
      .withResponse();
    expect(data.usage).toMatchObject({ prompt_tokens: 3100, completion_tokens: 50 });
    // claude-3-5-haiku, as on Anthropic's API.
    const expected = (100 * 0.8 + 400 * 1 + 600 * 1.6 + 2000 * 0.08 + 50 * 4) * PER_MILLION;
    expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(expected, 12);
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.cost).toBeCloseTo(expected, 12);
  });
});

describe('finding a price', () => {
  it('prices a dated or versioned name as its model, and leaves another model of the family unpriced', async () => {
    const costOf = async (model: string) => {
      const { traceId, headers } = traceHeaders();
      const { data, response } = await client(gateway, target(openai), headers)
        .chat.completions.create({ model, messages: userMessage('price me') })
        .withResponse();
      const [record] = await logsOf(gateway, traceId, 1);
      expect(record.prompt_tokens).toBeGreaterThan(0);
      return { usage: data.usage!, header: response.headers.get('x-gateway-cost'), cost: record.cost };
    };
    // gpt-4o: $2.50 in, $10 out.
    const dated = await costOf('gpt-4o-2024-08-06');
    const gpt4o = (dated.usage.prompt_tokens * 2.5 + dated.usage.completion_tokens * 10) * PER_MILLION;
    expect(Number(dated.header)).toBeCloseTo(gpt4o, 12);
    expect(dated.cost).toBeCloseTo(gpt4o, 12);
    // o1-pro costs ten times o1, gpt-4o's realtime and search models more than gpt-4o: none of them is
    // priced as the model its name starts with.
    for (const model of [
      'o1-pro-2025-03-19',
      'gpt-4o-realtime-preview',
      'gpt-4o-search-preview-2025-03-11',
    ]) {
      const other = await costOf(model);
      expect({ model, header: other.header, cost: other.cost }).toEqual({ model, header: null, cost: null });
    }
  });
});

describe('OpenAI service tiers of a stream', () => {
  async function streamCost(asked: string, served?: string) {
    if (served) openai.enqueue({ serviceTier: served });
    const { traceId, headers } = traceHeaders();
    const stream = await client(gateway, target(openai), headers).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: userMessage('stream it'),
      service_tier: asked as 'priority',
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    const [record] = await logsOf(gateway, traceId, 1);
    return { usage: usage!, cost: record.cost as number };
  }

  it('prices a stream on the tier its chunks name: priority served on the default tier at standard prices', async () => {
    // gpt-4o-mini: $0.15 in, $0.60 out; on priority $0.25 and $1.00.
    const downgraded = await streamCost('priority', 'default');
    const { usage } = downgraded;
    expect(downgraded.cost).toBeCloseTo(
      (usage.prompt_tokens * 0.15 + usage.completion_tokens * 0.6) * PER_MILLION,
      12,
    );
    const served = await streamCost('priority');
    expect(served.cost).toBeCloseTo(
      (served.usage.prompt_tokens * 0.25 + served.usage.completion_tokens * 1) * PER_MILLION,
      12,
    );
  });
});

describe('OpenAI service tiers of a Responses stream', () => {
  it('prices it on the tier its response.completed names: priority served on the default tier at standard prices', async () => {
    openai.enqueue({ serviceTier: 'default' });
    const { traceId, headers } = traceHeaders();
    const stream = await client(gateway, target(openai), headers).responses.create({
      model: 'gpt-4o-mini',
      input: 'stream it',
      service_tier: 'priority',
      stream: true,
    });
    let usage: { input_tokens: number; output_tokens: number } | undefined;
    for await (const event of stream) if (event.type === 'response.completed') usage = event.response.usage!;
    const [record] = await logsOf(gateway, traceId, 1);
    // gpt-4o-mini: $0.15 in, $0.60 out (on priority $0.25 and $1.00).
    expect(record.cost).toBeCloseTo(
      (usage!.input_tokens * 0.15 + usage!.output_tokens * 0.6) * PER_MILLION,
      12,
    );
  });
});

describe('pass-through pricing', () => {
  async function passthrough(
    path: string,
    config: Record<string, unknown>,
    answer: unknown,
    fields: Record<string, unknown> = {},
  ) {
    const { traceId, headers } = traceHeaders();
    const response = await postWithConfig(gateway, path, config, { ...fields, answer }, headers);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    const [record] = await logsOf(gateway, traceId, 1);
    return record;
  }

  it('prices a Gemini answer as the model of its modelVersion', async () => {
    const answer = {
      candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: 9,
        candidatesTokenCount: 28,
        thoughtsTokenCount: 244,
        totalTokenCount: 281,
      },
      modelVersion: 'gemini-2.5-flash',
    };
    const record = await passthrough(
      '/models/gemini-2.5-flash:generateContent',
      { provider: 'google', api_key: 'AIza-test', custom_host: recorded.url },
      answer,
    );
    // gemini-2.5-flash: $0.30 in, $2.50 out (thoughts included).
    expect(record).toMatchObject({ endpoint: 'passthrough', model: 'gemini-2.5-flash', prompt_tokens: 9 });
    expect(record.cost).toBeCloseTo((9 * 0.3 + 272 * 2.5) * PER_MILLION, 12);
  });

  it('prices a Gemini answer served on the flex tier, as its header says, at its flex price', async () => {
    const answer = {
      candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 28, totalTokenCount: 37 },
      modelVersion: 'gemini-2.5-flash',
    };
    const record = await passthrough(
      '/models/gemini-2.5-flash:generateContent',
      { provider: 'google', api_key: 'AIza-test', custom_host: recorded.url },
      answer,
      { answerHeaders: { 'x-gemini-service-tier': 'flex' } },
    );
    // gemini-2.5-flash: $0.30 in, $2.50 out, Flex at half.
    expect(record.cost).toBeCloseTo(((9 * 0.3 + 28 * 2.5) * PER_MILLION) / 2, 12);
  });

  it("records a Gemini stream's usage (alt=sse) from its last chunk's running totals", async () => {
    const { traceId, headers } = traceHeaders();
    const response = await postWithConfig(
      gateway,
      '/models/gemini-3-pro-preview:streamGenerateContent?alt=sse',
      {
        provider: 'google',
        api_key: 'AIza-test',
        custom_host: recorded.url,
      },
      { model: 'google/google-text', stream: true },
      headers,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(await response.text()).toContain('"modelVersion":"gemini-3-pro-preview"');
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toMatchObject({
      endpoint: 'passthrough',
      model: 'gemini-3-pro-preview',
      prompt_tokens: 9,
      completion_tokens: 208,
      total_tokens: 217,
    });
  });

  it('prices a Bedrock Converse answer, which names no model, as the model of its path', async () => {
    const answer = {
      output: { message: { role: 'assistant', content: [{ text: 'hi' }] } },
      stopReason: 'end_turn',
      usage: { inputTokens: 100, outputTokens: 50, totalTokens: 150 },
      metrics: { latencyMs: 10 },
    };
    const record = await passthrough(
      '/model/anthropic.claude-3-5-haiku-20241022-v1:0/converse',
      {
        provider: 'bedrock',
        cloudc_region: 'us-east-1',
        cloudc_access_key_id: 'AKIDFAKEBEDROCK',
        cloudc_secret_access_key: 'fake-secret-key',
        custom_host: recorded.url,
      },
      answer,
    );
    expect(record).toMatchObject({ model: 'anthropic.claude-3-5-haiku-20241022-v1:0', prompt_tokens: 100 });
    expect(record.cost).toBeCloseTo((100 * 0.8 + 50 * 4) * PER_MILLION, 12);
  });
});

describe('a call that reached no provider', () => {
  it('costs nothing, so a managed batch with such a line still has its cost', async () => {
    const batches = sdk(gateway.url, gateway.adminKey, target(openai));
    // The gateway's own option, refused before any call in strict mode.
    const refused = chatLine('refused');
    const lines = [
      chatLine('priced-1'),
      {
        ...refused,
        body: { ...(refused.body as object), thinking: { type: 'enabled', budget_tokens: 1024 } },
      },
      chatLine('priced-2'),
    ];
    const file = await upload(batches, jsonl(lines));
    const created = await createBatch(batches, file.id);
    const batch = await waitFor(batches, created.id, finished, 30_000);
    expect(batch.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    const output = await contentLines(batches, batch.output_file_id);
    const expected = output
      .map(
        (line) =>
          (line.response!.body as { usage: { prompt_tokens: number; completion_tokens: number } }).usage,
      )
      .reduce(
        (sum, usage) => sum + (usage.prompt_tokens * 0.15 + usage.completion_tokens * 0.6) * PER_MILLION,
        0,
      );
    const { response } = await batches.batches.retrieve(batch.id).withResponse();
    expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(expected, 10);
  });
});

describe('Gemini usage', () => {
  it('prices audio read from the prompt cache once, at the cache price, not also as fresh audio', async () => {
    // 5,000 prompt tokens: 1,000 of text and 4,000 of audio, of which 3,000 were read from the cache
    // (cacheTokensDetails: 500 text, 2,500 audio); 100 out.
    google.enqueue({
      json: {
        candidates: [
          { content: { role: 'model', parts: [{ text: 'heard' }] }, finishReason: 'STOP', index: 0 },
        ],
        usageMetadata: {
          promptTokenCount: 5000,
          candidatesTokenCount: 100,
          totalTokenCount: 5100,
          cachedContentTokenCount: 3000,
          promptTokensDetails: [
            { modality: 'TEXT', tokenCount: 1000 },
            { modality: 'AUDIO', tokenCount: 4000 },
          ],
          cacheTokensDetails: [
            { modality: 'TEXT', tokenCount: 500 },
            { modality: 'AUDIO', tokenCount: 2500 },
          ],
        },
        modelVersion: 'gemini-2.5-flash',
      },
    });
    const { traceId, headers } = traceHeaders();
    const config = { provider: 'google', api_key: google.apiKey, custom_host: google.url };
    const { data, response } = await client(gateway, config, headers)
      .chat.completions.create({ model: 'gemini-2.5-flash', messages: userMessage('listen') })
      .withResponse();
    expect(data.usage).toMatchObject({ prompt_tokens: 5000, completion_tokens: 100, total_tokens: 5100 });
    // gemini-2.5-flash: text $0.30, audio $1, cache reads $0.03, output $2.50. Fresh: 500 text, 1,500 audio.
    const expected = (500 * 0.3 + 1500 * 1 + 3000 * 0.03 + 100 * 2.5) * PER_MILLION;
    expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(expected, 12);
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.cost).toBeCloseTo(expected, 12);
  });
});

describe('OpenAI service tiers', () => {
  it('prices a call asked for the flex tier at the Batch API price, as OpenAI bills flex processing', async () => {
    const { traceId, headers } = traceHeaders();
    const { data, response } = await client(gateway, target(openai), headers)
      .chat.completions.create({
        model: 'gpt-4o-mini',
        messages: userMessage('slowly'),
        service_tier: 'flex',
      })
      .withResponse();
    // gpt-4o-mini at half its $0.15 and $0.60.
    const usage = data.usage!;
    const expected = ((usage.prompt_tokens * 0.15 + usage.completion_tokens * 0.6) / 2) * PER_MILLION;
    expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(expected, 12);
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.cost).toBeCloseTo(expected, 12);
  });

  it('prices a call served on the priority tier at its priority prices, as OpenAI bills priority processing', async () => {
    const { traceId, headers } = traceHeaders();
    const { data, response } = await client(gateway, target(openai), headers)
      .chat.completions.create({
        model: 'gpt-4o-mini',
        messages: userMessage('quickly'),
        service_tier: 'priority',
      })
      .withResponse();
    expect(data.service_tier).toBe('priority');
    // gpt-4o-mini on priority processing: $0.25 in, $1.00 out (openai.com, Priority processing).
    const usage = data.usage!;
    const expected = (usage.prompt_tokens * 0.25 + usage.completion_tokens * 1) * PER_MILLION;
    expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(expected, 12);
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.cost).toBeCloseTo(expected, 12);
  });
});

describe('prices from a price file: server-tool fees, service tiers', () => {
  let priced: TestGateway;
  beforeAll(async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'prices-')), 'prices.json');
    writeFileSync(
      file,
      JSON.stringify({
        providers: {
          anthropic: {
            tool_fees: { web_search: 10 },
            models: {
              'claude-priced': { input: 1, output: 5, service_tiers: { priority: { input: 2, output: 10 } } },
            },
          },
          openai: { tool_fees: { web_search: 10 } },
          google: { tool_fees: { grounded_prompt: 35 } },
        },
      }),
    );
    priced = await startGateway({ env: { GATEWAY_PRICES_FILE: file } });
  });
  afterAll(async () => {
    await priced?.close();
  });

  it("adds the price file's fee for each web search Claude's answer reports to its tokens' price", async () => {
    anthropic.enqueue({ kind: 'json', fixture: 'anthropic-web-search-tool.1.json' });
    const { traceId, headers } = traceHeaders();
    const config = { provider: 'anthropic', api_key: 'sk-ant-usage', custom_host: anthropic.url };
    const { data, response } = await client(priced, config, headers)
      .chat.completions.create({ model: 'claude-sonnet-4-20250514', messages: userMessage('search') })
      .withResponse();
    // claude-sonnet-4: $3 in, $15 out; 27,118 in, 600 out, and two searches at $10 per 1,000.
    expect(data.usage).toMatchObject({ prompt_tokens: 27118, completion_tokens: 600 });
    const expected = (27118 * 3 + 600 * 15) * PER_MILLION + 2 * 0.01;
    expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(expected, 12);
    const [record] = await logsOf(priced, traceId, 1);
    expect(record.cost).toBeCloseTo(expected, 12);
  });

  it("adds the price file's fee for each web_search_call of a Response to its tokens' price", async () => {
    const answer = JSON.parse(readRecorded('openai', 'responses/openai-web-search-tool.1.json')) as {
      usage: { input_tokens: number; output_tokens: number; input_tokens_details: { cached_tokens: number } };
    };
    openai.enqueue({ status: 200, body: answer });
    const { traceId, headers } = traceHeaders();
    const { response } = await client(priced, target(openai), headers)
      .responses.create({ model: 'gpt-5-mini', input: 'search the web', tools: [{ type: 'web_search' }] })
      .withResponse();
    // gpt-5-mini: $0.25 in, $0.025 cached, $2 out (reasoning included); three searches at $10 per 1,000.
    const { input_tokens: input, output_tokens: output } = answer.usage;
    const cached = answer.usage.input_tokens_details.cached_tokens;
    const expected = ((input - cached) * 0.25 + cached * 0.025 + output * 2) * PER_MILLION + 3 * 0.01;
    expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(expected, 12);
    const [record] = await logsOf(priced, traceId, 1);
    expect(record.cost).toBeCloseTo(expected, 12);
  });

  it("prices a Claude stream on the tier its message_start's usage names, at the price file's prices for it", async () => {
    const message = {
      id: 'msg_tier',
      type: 'message',
      role: 'assistant',
      model: 'claude-priced',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 1000, output_tokens: 1, service_tier: 'priority' },
    };
    anthropic.enqueue({
      kind: 'stream',
      events: [
        { type: 'message_start', message },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'fast' } },
        { type: 'content_block_stop', index: 0 },
        {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: 100 },
        },
        { type: 'message_stop' },
      ],
    });
    const { traceId, headers } = traceHeaders();
    const config = { provider: 'anthropic', api_key: 'sk-ant-usage', custom_host: anthropic.url };
    const stream = await client(priced, config, headers).chat.completions.create({
      model: 'claude-priced',
      messages: userMessage('hi'),
      stream: true,
    });
    for await (const _chunk of stream) void _chunk;
    const [record] = await logsOf(priced, traceId, 1);
    // On priority: $2 in, $10 out per million.
    expect(record.cost).toBeCloseTo((1000 * 2 + 100 * 10) * PER_MILLION, 12);
  });

  it("adds the price file's fee for a Gemini answer grounded with Google Search (its groundingMetadata)", async () => {
    const answer = {
      candidates: [
        {
          content: { role: 'model', parts: [{ text: 'Spain won.' }] },
          finishReason: 'STOP',
          index: 0,
          groundingMetadata: { webSearchQueries: ['euro 2024 winner', 'euro 2024 final score'] },
        },
      ],
      usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 28, totalTokenCount: 37 },
      modelVersion: 'gemini-2.5-flash',
    };
    const { traceId, headers } = traceHeaders();
    const response = await postWithConfig(
      priced,
      '/models/gemini-2.5-flash:generateContent',
      {
        provider: 'google',
        api_key: 'AIza-test',
        custom_host: recorded.url,
      },
      { answer },
      headers,
    );
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    const [record] = await logsOf(priced, traceId, 1);
    // gemini-2.5-flash: $0.30 in, $2.50 out; one grounded prompt at $35 per 1,000.
    expect(record.cost).toBeCloseTo((9 * 0.3 + 28 * 2.5) * PER_MILLION + 0.035, 12);
  });
});
