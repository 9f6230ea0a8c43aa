/**
 * A call streamed is billed as the same call answered whole, so the gateway must report and price it the
 * same: for each provider family that streams, the same answer is given once as JSON and once as a stream
 * (the provider's recorded wire samples, their usage set to the same counts), through the `openai` SDK, and
 * the two log records' usage columns and cost must be equal, and so must the JSON answer's `usage` and the
 * stream's usage chunk (`stream_options.include_usage`), which must also be OpenAI's `CompletionUsage`. A
 * Messages call (the Anthropic SDK) is held to the same: its record, and the usage of its `message_start`
 * and `message_delta` against the Message's, natively (Anthropic, Vertex AI, Bedrock) or translated; and so
 * is a Responses call, its `response.completed` usage against the Response's (natively on OpenAI and Azure
 * OpenAI, a search's calls priced as tool uses).
 * Every kind of token has its own price here, so a count left out of either side changes the cost.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { readBedrockJsonFixture, readBedrockStreamFixture } from '../fakes/bedrock/fixtures.js';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/server.js';
import { startFakeCohere, type FakeCohere } from '../fakes/cohere/server.js';
import { providerFixturesDir } from '../fakes/cohere/fixtures.js';
import { readGoogleFixture, readGoogleStream } from '../fakes/google/fixtures.js';
import { startFakeGoogle, type FakeGoogle, type GeminiFakeBehaviour } from '../fakes/google/server.js';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-ai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { client, logsOf, traceHeaders, userMessage, type Config } from '../routing/support.js';
import { gatewayAnthropic } from '../helpers/anthropic-client.js';
import { vertexTarget } from '../helpers/provider-targets.js';
import { startWireUpstream, type WireUpstream } from '../helpers/wire-upstream.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- wire JSON

/** Dollars per million tokens, each kind apart; tool fees per 1,000 uses. */
const PRICE = {
  input: 1,
  cache_read: 0.1,
  cache_write: 2,
  cache_write_1h: 3,
  input_audio: 5,
  input_image: 7,
  output: 11,
  reasoning: 13,
  output_audio: 17,
  tool_fees: { web_search: 19, web_fetch: 23, grounded_prompt: 29 },
  service_tiers: { priority: { input: 2, cache_read: 0.2, cache_write: 4, cache_write_1h: 6, output: 22 } },
};
const PRICED: Record<string, string> = {
  openai: 'gpt-parity',
  anthropic: 'claude-parity',
  google: 'gemini-parity',
  deepseek: 'deepseek-parity',
  groq: 'groq-parity',
  'mistral-ai': 'mistral-parity',
  cohere: 'command-parity',
};

let gateway: TestGateway;
let anthropic: FakeAnthropic;
let bedrock: FakeBedrock;
let cohere: FakeCohere;
let google: FakeGoogle;
let vertex: FakeVertex;
/** An OpenAI-wire provider: answers the next call with `wire.json`, or `wire.chunks` as server-sent events. */
let openAIWire: WireUpstream;
const wire: { json?: Json; chunks?: Json[] } = {};

beforeAll(async () => {
  anthropic = await startFakeAnthropic({ apiKey: 'sk-ant-parity' });
  bedrock = await startFakeBedrock();
  cohere = await startFakeCohere();
  google = await startFakeGoogle();
  vertex = await startFakeVertex();
  openAIWire = await startWireUpstream(({ path: route, body }) => {
    if (!body.stream) return { json: JSON.stringify(wire.json) };
    // The Responses API's events name their type; chat chunks end with [DONE].
    const responses = route.split('?')[0].endsWith('/responses');
    const events = (wire.chunks ?? []).map((event) => ({
      ...(responses && { event: String(event.type) }),
      data: JSON.stringify(event),
    }));
    return { events, done: !responses };
  });
  const pricesFile = path.join(mkdtempSync(path.join(tmpdir(), 'parity-prices-')), 'prices.json');
  const providers = Object.fromEntries(
    Object.entries(PRICED).map(([provider, model]) => [provider, { models: { [model]: PRICE } }]),
  );
  writeFileSync(pricesFile, JSON.stringify({ providers }));
  gateway = await startGateway({ env: { GATEWAY_PRICES_FILE: pricesFile } });
});

afterAll(async () => {
  await gateway?.close();
  await anthropic?.close();
  await bedrock?.close();
  await cohere?.close();
  await google?.close();
  await vertex?.close();
  await openAIWire?.close();
});

function recordedJson(provider: string, name: string): Json {
  return JSON.parse(readFileSync(path.join(providerFixturesDir(provider), name), 'utf8')) as Json;
}

function recordedChunks(provider: string, name: string): Json[] {
  return readFileSync(path.join(providerFixturesDir(provider), name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Json);
}

interface ParityCase {
  name: string;
  config: () => Config;
  model: string;
  /** The fake's next answer: whole, or streamed. */
  arrange(stream: boolean): void;
  /** The model and answers of a Messages call, where the provider answers it otherwise than chat. */
  messages?: Pick<ParityCase, 'model' | 'arrange'>;
  /** The same for a Responses call. */
  responses?: Pick<ParityCase, 'model' | 'arrange'>;
}

/** An OpenAI-wire provider's recorded answer and stream, as `model`, both with `usage` (the stream's on
 * the chunk that carried it); `edit` changes the answer and that chunk alike. */
function openAIWireCase(
  name: string,
  config: () => Config,
  recorded: { provider: string; json: string; chunks: string },
  model: string,
  usage: Json,
  edit: (answer: Json) => Json = (answer) => answer,
): ParityCase {
  return {
    name,
    config,
    model,
    arrange(stream) {
      if (!stream) {
        wire.json = edit({ ...recordedJson(recorded.provider, recorded.json), model, usage });
        return;
      }
      wire.chunks = recordedChunks(recorded.provider, recorded.chunks).map((chunk) =>
        chunk.usage ? edit({ ...chunk, model, usage }) : chunk.model ? { ...chunk, model } : chunk,
      );
    },
  };
}

/** OpenAI's Responses API natively: the recorded stream of a search, as `model`, its `response.completed`
 * with `usage`; answered whole, the Response that event carries. */
const nativeResponses = (model: string, usage: Json): Pick<ParityCase, 'model' | 'arrange'> => ({
  model,
  arrange(stream) {
    const events = recordedChunks('openai', 'responses/openai-web-search-tool.1.chunks.txt').map((event) =>
      event.response ? { ...event, response: { ...event.response, model } } : event,
    );
    const completed = events.at(-1)!;
    completed.response.usage = usage;
    if (stream) wire.chunks = events;
    else wire.json = completed.response;
  },
});

const RESPONSES_USAGE = {
  input_tokens: 2000,
  input_tokens_details: { cached_tokens: 1024 },
  output_tokens: 500,
  output_tokens_details: { reasoning_tokens: 200 },
  total_tokens: 2500,
};

const OPENAI_USAGE = {
  prompt_tokens: 2000,
  completion_tokens: 500,
  total_tokens: 2500,
  prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 100 },
  completion_tokens_details: {
    reasoning_tokens: 200,
    audio_tokens: 50,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
  },
};

const ANTHROPIC_USAGE = {
  input_tokens: 100,
  cache_creation_input_tokens: 1000,
  cache_read_input_tokens: 2000,
  cache_creation: { ephemeral_5m_input_tokens: 400, ephemeral_1h_input_tokens: 600 },
  output_tokens: 50,
  server_tool_use: { web_search_requests: 2, web_fetch_requests: 1 },
  service_tier: 'standard',
};

function anthropicMessage(model: string): Json {
  return {
    id: 'msg_parity',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: 'Paris.' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: ANTHROPIC_USAGE,
  };
}

/** The message as Anthropic streams it: the prompt's counts in `message_start`, the output's (and the
 * server tools') in `message_delta`; or, as its newer streams do, every count again in `message_delta`. */
function anthropicEvents(model: string, repeatInDelta: boolean): Json[] {
  const { output_tokens: _output, server_tool_use: tools, ...prompt } = ANTHROPIC_USAGE;
  const { cache_creation: _breakdown, service_tier: _tier, ...counts } = ANTHROPIC_USAGE;
  return [
    {
      type: 'message_start',
      message: {
        ...anthropicMessage(model),
        content: [],
        stop_reason: null,
        usage: { ...prompt, output_tokens: 1 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Paris.' } },
    { type: 'content_block_stop', index: 0 },
    {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: repeatInDelta ? counts : { output_tokens: 50, server_tool_use: tools },
    },
    { type: 'message_stop' },
  ];
}

const BEDROCK_USAGE = {
  inputTokens: 100,
  outputTokens: 50,
  totalTokens: 3150,
  cacheReadInputTokens: 2000,
  cacheWriteInputTokens: 1000,
  cacheDetails: [
    { ttl: '5m', inputTokens: 400 },
    { ttl: '1h', inputTokens: 600 },
  ],
};

/** Gemini's counts: a cached prefix, thoughts, a tool-use prompt, images and audio in and audio out. */
const GEMINI_USAGE = {
  promptTokenCount: 1500,
  candidatesTokenCount: 300,
  toolUsePromptTokenCount: 20,
  thoughtsTokenCount: 200,
  totalTokenCount: 2020,
  cachedContentTokenCount: 1000,
  promptTokensDetails: [
    { modality: 'TEXT', tokenCount: 1100 },
    { modality: 'IMAGE', tokenCount: 300 },
    { modality: 'AUDIO', tokenCount: 100 },
  ],
  cacheTokensDetails: [
    { modality: 'TEXT', tokenCount: 900 },
    { modality: 'IMAGE', tokenCount: 100 },
  ],
  candidatesTokensDetails: [
    { modality: 'TEXT', tokenCount: 250 },
    { modality: 'AUDIO', tokenCount: 50 },
  ],
};

/** A recorded Gemini answer and stream, as `model`, with `usageMetadata` (the stream's last event's; the
 * events before it carry the running counts, as Gemini's do). */
function gemini(model: string, metadata: Json, stream: boolean): GeminiFakeBehaviour {
  if (!stream)
    return {
      json: {
        ...(readGoogleFixture('google-text.json') as Json),
        modelVersion: model,
        usageMetadata: metadata,
      },
    };
  const lines = readGoogleStream('google-text.chunks.txt').map((line) => JSON.parse(line) as Json);
  const running = {
    promptTokenCount: metadata.promptTokenCount,
    candidatesTokenCount: 1,
    totalTokenCount: 1,
  };
  const traffic = metadata.trafficType === undefined ? {} : { trafficType: metadata.trafficType };
  return {
    events: lines.map((event, i) => ({
      ...event,
      modelVersion: model,
      usageMetadata: i === lines.length - 1 ? metadata : { ...running, ...traffic },
    })),
  };
}

const cases: ParityCase[] = [
  {
    ...openAIWireCase(
      'openai',
      () => ({ provider: 'openai', api_key: 'sk-parity', custom_host: openAIWire.url }),
      { provider: 'openai', json: 'chat/openai-text.json', chunks: 'chat/openai-text.chunks.txt' },
      'gpt-parity',
      OPENAI_USAGE,
    ),
    responses: nativeResponses('gpt-parity', RESPONSES_USAGE),
  },
  {
    ...openAIWireCase(
      'azure-openai',
      () => ({
        provider: 'azure-openai',
        api_key: 'azure-parity',
        custom_host: openAIWire.url,
        cloudd_deployment_name: 'parity',
        cloudd_api_version: '2024-10-21',
      }),
      // Azure's stream: a first event of the prompt's content-filter verdicts, then OpenAI's chunks.
      { provider: 'openai', json: 'chat/openai-text.json', chunks: 'chat/azure-model-router.1.chunks.txt' },
      'gpt-parity',
      OPENAI_USAGE,
      // The recorded Azure stream names no tier: nor does the answer here.
      ({ service_tier: _tier, ...rest }) => rest,
    ),
    responses: nativeResponses('gpt-parity', RESPONSES_USAGE),
  },
  openAIWireCase(
    'deepseek',
    () => ({ provider: 'deepseek', api_key: 'sk-parity', custom_host: openAIWire.url }),
    {
      provider: 'deepseek',
      json: 'chat/deepseek-reasoning.json',
      chunks: 'chat/deepseek-reasoning.chunks.txt',
    },
    'deepseek-parity',
    {
      prompt_tokens: 2000,
      completion_tokens: 500,
      total_tokens: 2500,
      prompt_tokens_details: { cached_tokens: 1024 },
      completion_tokens_details: { reasoning_tokens: 200 },
      prompt_cache_hit_tokens: 1024,
      prompt_cache_miss_tokens: 976,
    },
  ),
  openAIWireCase(
    'groq',
    () => ({ provider: 'groq', api_key: 'gsk-parity', custom_host: openAIWire.url }),
    { provider: 'groq', json: 'groq-reasoning.json', chunks: 'groq-reasoning.chunks.txt' },
    'groq-parity',
    {
      queue_time: 0.3,
      prompt_tokens: 2000,
      prompt_time: 0.001,
      completion_tokens: 500,
      completion_time: 1.2,
      total_tokens: 2500,
      total_time: 1.2,
      completion_tokens_details: { reasoning_tokens: 200 },
    },
    // Groq repeats the stream's usage under `x_groq`.
    (chunk) =>
      chunk.object === 'chat.completion.chunk'
        ? { ...chunk, x_groq: { id: 'req_parity', usage: chunk.usage } }
        : chunk,
  ),
  openAIWireCase(
    'mistral-ai',
    () => ({ provider: 'mistral-ai', api_key: 'mistral-parity', custom_host: openAIWire.url }),
    { provider: 'mistral', json: 'mistral-reasoning.json', chunks: 'mistral-reasoning.chunks.txt' },
    'mistral-parity',
    { prompt_tokens: 2000, total_tokens: 2500, completion_tokens: 500 },
  ),
  openAIWireCase(
    'x-ai',
    () => ({ provider: 'x-ai', api_key: 'xai-parity', custom_host: openAIWire.url }),
    { provider: 'xai', json: 'xai-tool-call.json', chunks: 'xai-tool-call.chunks.txt' },
    'grok-3-mini',
    recordedJson('xai', 'xai-tool-call.json').usage as Json,
  ),
  {
    name: 'anthropic (served on the priority tier)',
    config: () => ({ provider: 'anthropic', api_key: 'sk-ant-parity', custom_host: anthropic.url }),
    model: 'claude-parity',
    arrange(stream) {
      const priority = (usage: Json) => ({ ...usage, service_tier: 'priority' });
      const events = anthropicEvents('claude-parity', false);
      events[0].message.usage = priority(events[0].message.usage);
      const message = anthropicMessage('claude-parity');
      anthropic.enqueue(
        stream
          ? { kind: 'stream', events }
          : { kind: 'json', body: { ...message, usage: priority(message.usage) } },
      );
    },
  },
  ...[false, true].map((repeatInDelta): ParityCase => ({
    name: `anthropic (counts ${repeatInDelta ? 'repeated in message_delta' : 'in message_start'})`,
    config: () => ({ provider: 'anthropic', api_key: 'sk-ant-parity', custom_host: anthropic.url }),
    model: 'claude-parity',
    arrange(stream) {
      anthropic.enqueue(
        stream
          ? { kind: 'stream', events: anthropicEvents('claude-parity', repeatInDelta) }
          : { kind: 'json', body: anthropicMessage('claude-parity') },
      );
    },
  })),
  ...[false, true].map((dedicated): ParityCase => ({
    name: `vertex-ai (claude${dedicated ? ', Provisioned Throughput only' : ''})`,
    config: () => ({ ...vertexTarget(vertex), ...(dedicated && { cloudb_request_type: 'dedicated' }) }),
    model: 'claude-parity@20250101',
    arrange(stream) {
      vertex.enqueue(
        stream
          ? { anthropicEvents: anthropicEvents('claude-parity', false) as Array<{ type: string }> }
          : { anthropicBody: anthropicMessage('claude-parity') },
      );
    },
  })),
  {
    name: 'bedrock (converse)',
    config: () => ({
      provider: 'bedrock',
      cloudc_region: 'us-east-1',
      cloudc_access_key_id: 'AKIDFAKEBEDROCK',
      cloudc_secret_access_key: 'fake-secret-key',
      custom_host: bedrock.url,
    }),
    model: 'anthropic.claude-parity-v1:0',
    arrange(stream) {
      if (!stream) {
        bedrock.enqueue({
          kind: 'json',
          body: { ...readBedrockJsonFixture('amazon-bedrock-text.json'), usage: BEDROCK_USAGE },
        });
        return;
      }
      const lines = readBedrockStreamFixture('amazon-bedrock-text.chunks.txt').map((line) => {
        const event = JSON.parse(line) as Json;
        return JSON.stringify(
          event.metadata ? { metadata: { ...event.metadata, usage: BEDROCK_USAGE } } : event,
        );
      });
      bedrock.enqueue({ kind: 'stream', fixture: 'amazon-bedrock-text.chunks.txt', lines });
    },
    // Claude's Messages go to InvokeModel, answered in Anthropic's shape.
    messages: {
      model: 'anthropic.claude-parity-v1:0',
      arrange(stream) {
        bedrock.enqueue(
          stream
            ? { kind: 'anthropic-stream', events: anthropicEvents('claude-parity', false) }
            : { kind: 'json', body: anthropicMessage('claude-parity') },
        );
      },
    },
  },
  {
    name: 'cohere',
    config: () => ({ provider: 'cohere', api_key: cohere.apiKey, custom_host: cohere.url }),
    model: 'command-parity',
    arrange(stream) {
      // What Cohere bills, and what the model saw (its template's tokens, most of them cached).
      const usage = {
        billed_units: { input_tokens: 2000, output_tokens: 500 },
        tokens: { input_tokens: 2495, output_tokens: 503 },
        cached_tokens: 448,
      };
      if (!stream) {
        cohere.enqueue({ json: { ...recordedJson('cohere', 'cohere-text.json'), usage } });
        return;
      }
      const events = recordedChunks('cohere', 'cohere-text.chunks.txt').map((event) =>
        event.type === 'message-end' ? { ...event, delta: { ...event.delta, usage } } : event,
      );
      cohere.enqueue({ events });
    },
  },
  {
    name: 'google',
    config: () => ({ provider: 'google', api_key: google.apiKey, custom_host: google.url }),
    model: 'gemini-parity',
    arrange(stream) {
      google.enqueue(gemini('gemini-parity', GEMINI_USAGE, stream));
    },
  },
  ...['ON_DEMAND', 'PROVISIONED_THROUGHPUT'].map((trafficType): ParityCase => ({
    name: `vertex-ai (gemini, ${trafficType})`,
    config: () => vertexTarget(vertex),
    model: 'gemini-parity',
    arrange(stream) {
      vertex.enqueue(gemini('gemini-parity', { ...GEMINI_USAGE, trafficType }, stream));
    },
  })),
];

/** The record's columns of usage and cost. */
const usageColumns = (record: Json) => ({
  provider: record.provider,
  model: record.model,
  prompt_tokens: record.prompt_tokens,
  completion_tokens: record.completion_tokens,
  total_tokens: record.total_tokens,
  cached_tokens: record.cached_tokens,
  reasoning_tokens: record.reasoning_tokens,
  cost: record.cost,
});

describe.each(cases)(
  '$name: a streamed call is reported and priced as the same call answered whole',
  (entry) => {
    it('has the same usage columns and cost in its log record, and the same usage for the client', async () => {
      entry.arrange(false);
      const whole = traceHeaders();
      const { data, response } = await client(gateway, entry.config(), whole.headers)
        .chat.completions.create({ model: entry.model, messages: userMessage('capital of France?') })
        .withResponse();
      const [wholeRecord] = await logsOf(gateway, whole.traceId, 1);

      entry.arrange(true);
      const streamed = traceHeaders();
      const stream = await client(gateway, entry.config(), streamed.headers).chat.completions.create({
        model: entry.model,
        messages: userMessage('capital of France?'),
        stream: true,
        stream_options: { include_usage: true },
      });
      let usage: unknown;
      let serviceTier: unknown;
      for await (const chunk of stream) {
        usage = chunk.usage ?? usage;
        serviceTier = chunk.service_tier ?? serviceTier;
      }
      const [streamRecord] = await logsOf(gateway, streamed.traceId, 1);

      expect(wholeRecord.status).toBe(200);
      expect(streamRecord.status).toBe(200);
      expect(wholeRecord.cost).not.toBeNull();
      expect(Number(response.headers.get('x-gateway-cost'))).toBeCloseTo(wholeRecord.cost!, 10);
      expect(usageColumns(streamRecord)).toEqual(usageColumns(wholeRecord));
      expect(usage).toEqual(data.usage);
      expect(serviceTier).toEqual(data.service_tier);
      expectOpenAPIValid('CompletionUsage', usage);
    });
  },
);

describe.each(cases)(
  '$name: a streamed Messages call is reported and priced as the same call answered whole',
  (entry) => {
    it('has the same usage columns and cost in its log record, and the same usage for the client', async () => {
      const { model, arrange } = entry.messages ?? entry;
      const request = { model, max_tokens: 100, messages: userMessage('capital of France?') };

      arrange(false);
      const whole = traceHeaders();
      const message = await gatewayAnthropic(gateway, entry.config(), whole.headers).messages.create(request);
      const [wholeRecord] = await logsOf(gateway, whole.traceId, 1);

      arrange(true);
      const streamed = traceHeaders();
      const stream = await gatewayAnthropic(gateway, entry.config(), streamed.headers).messages.create({
        ...request,
        stream: true,
      });
      // The usage of message_start, each count updated by message_delta's (a null there is no count).
      let usage: Json = {};
      for await (const event of stream) {
        if (event.type === 'message_start') usage = { ...event.message.usage };
        if (event.type === 'message_delta') {
          for (const [key, value] of Object.entries(event.usage)) {
            if (value !== null || !(key in usage)) usage[key] = value;
          }
        }
      }
      const [streamRecord] = await logsOf(gateway, streamed.traceId, 1);

      expect(wholeRecord.status).toBe(200);
      expect(streamRecord.status).toBe(200);
      expect(wholeRecord.cost).not.toBeNull();
      expect(usageColumns(streamRecord)).toEqual(usageColumns(wholeRecord));
      // Anthropic's message_delta carries the counts, not the writes' breakdown by TTL (message_start's
      // alone): a stream whose usage comes at its end gives none (null), never another than the Message's.
      const { cache_creation: breakdown, ...counts } = usage;
      expect({ ...counts, cache_creation: breakdown ?? message.usage.cache_creation }).toEqual(message.usage);
    });
  },
);

describe.each(cases)(
  '$name: a streamed Responses call is reported and priced as the same call answered whole',
  (entry) => {
    it('has the same usage columns and cost in its log record, and the same usage for the client', async () => {
      const { model, arrange } = entry.responses ?? entry;

      arrange(false);
      const whole = traceHeaders();
      const response = await client(gateway, entry.config(), whole.headers).responses.create({
        model,
        input: 'capital of France?',
      });
      const [wholeRecord] = await logsOf(gateway, whole.traceId, 1);

      arrange(true);
      const streamed = traceHeaders();
      const stream = await client(gateway, entry.config(), streamed.headers).responses.create({
        model,
        input: 'capital of France?',
        stream: true,
      });
      let usage: unknown;
      for await (const event of stream) if (event.type === 'response.completed') usage = event.response.usage;
      const [streamRecord] = await logsOf(gateway, streamed.traceId, 1);

      expect(wholeRecord.status).toBe(200);
      expect(streamRecord.status).toBe(200);
      expect(wholeRecord.cost).not.toBeNull();
      expect(usageColumns(streamRecord)).toEqual(usageColumns(wholeRecord));
      expect(usage).toEqual(response.usage);
    });
  },
);
