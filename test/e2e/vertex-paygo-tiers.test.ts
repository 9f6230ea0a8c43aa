/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// Vertex AI's Priority PayGo and Flex PayGo: a target asks for them with `cloudb_shared_request_type`, sent as
// Vertex's X-Vertex-AI-LLM-Shared-Request-Type (global endpoint only), beside `cloudb_request_type`'s
// X-Vertex-AI-LLM-Request-Type; an answer that says it was served on them (usageMetadata.trafficType) is
// priced on the priority or flex tier. The client is the `openai` SDK; Vertex is the fake, replaying the
// recorded Vertex answers and streams.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGoogleFixture, readGoogleStream } from '../fakes/google/fixtures.js';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-ai/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, logsOf, traceHeaders } from '../routing/support.js';
import { vertexTarget } from '../helpers/provider-targets.js';

let gateway: TestGateway;
let fake: FakeVertex;

const PER_MILLION = 1e-6;
// gemini-2.5-flash on the shipped table: $0.30 in, $2.50 out (thoughts at the output price); no Priority
// prices. A deployment's file gives its Vertex AI gemini-2.5-pro its own Priority prices.
const FLASH = { input: 0.3, output: 2.5 };
const PRO = { input: 1.25, output: 10, service_tiers: { priority: { input: 2.25, output: 18 } } };

beforeAll(async () => {
  fake = await startFakeVertex();
  const pricesFile = join(mkdtempSync(join(tmpdir(), 'prices-')), 'prices.json');
  writeFileSync(
    pricesFile,
    JSON.stringify({ providers: { 'vertex-ai': { models: { 'gemini-2.5-pro': PRO } } } }),
  );
  gateway = await startGateway({ env: { GATEWAY_PRICES_FILE: pricesFile } });
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

function vertexConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return vertexTarget(fake, { cloudb_region: 'global', ...extra });
}

/** The recorded plain answer, as Vertex sends it: with the traffic type that served it (and other counts). */
function recordedAnswer(trafficType: string, model = 'gemini-2.5-flash', usageMetadata?: any): any {
  const answer = readGoogleFixture('google-text.json') as any;
  return {
    ...answer,
    modelVersion: model,
    usageMetadata: { ...(usageMetadata ?? answer.usageMetadata), trafficType },
  };
}

/** A recorded Vertex stream's events, as `model` served on `trafficType` (on every event, as Vertex names
 * it). */
function recordedStream(trafficType: string, model = 'gemini-2.5-flash'): any[] {
  return readGoogleStream('google-vertex-stream-tool-call-arguments-nested.1.chunks.txt').map((line) => {
    const event = JSON.parse(line);
    return { ...event, modelVersion: model, usageMetadata: { ...event.usageMetadata, trafficType } };
  });
}

const ask = { model: 'gemini-2.5-flash', messages: [{ role: 'user' as const, content: 'Hi' }] };

function lastHeaders(): { requestType: unknown; sharedRequestType: unknown } {
  const headers = fake.requests.at(-1)!.headers;
  return {
    requestType: headers['x-vertex-ai-llm-request-type'],
    sharedRequestType: headers['x-vertex-ai-llm-shared-request-type'],
  };
}

describe("a target's cloudb_shared_request_type (X-Vertex-AI-LLM-Shared-Request-Type)", () => {
  it('asks Vertex for Priority PayGo, after Provisioned Throughput, on every call of the target', async () => {
    const priority = client(gateway, vertexConfig({ cloudb_shared_request_type: 'priority' }));
    fake.enqueue({ json: recordedAnswer('ON_DEMAND_PRIORITY') });
    await priority.chat.completions.create(ask);
    expect(lastHeaders()).toEqual({ requestType: undefined, sharedRequestType: 'priority' });

    const embedded = await priority.embeddings.create({ model: 'text-embedding-005', input: 'Hi' });
    expect(embedded.data).toHaveLength(1);
    expect(lastHeaders()).toEqual({ requestType: undefined, sharedRequestType: 'priority' });
  });

  it('asks for Flex PayGo only, bypassing Provisioned Throughput, with cloudb_request_type shared', async () => {
    const config = vertexConfig({ cloudb_request_type: 'shared', cloudb_shared_request_type: 'flex' });
    fake.enqueue({ events: recordedStream('ON_DEMAND_FLEX') });
    const stream = await client(gateway, config).chat.completions.create({ ...ask, stream: true });
    for await (const _chunk of stream) void _chunk;
    expect(lastHeaders()).toEqual({ requestType: 'shared', sharedRequestType: 'flex' });
  });

  it('sends neither without the settings', async () => {
    fake.enqueue({ json: recordedAnswer('ON_DEMAND') });
    await client(gateway, vertexConfig()).chat.completions.create(ask);
    expect(lastHeaders()).toEqual({ requestType: undefined, sharedRequestType: undefined });
  });

  it("is sent on a pass-through call, over a client's own header", async () => {
    fake.enqueue({ json: recordedAnswer('ON_DEMAND_FLEX') });
    const response = await postWithConfig(
      gateway,
      '/projects/test-project/locations/global/publishers/google/models/gemini-2.5-flash:generateContent',
      vertexConfig({ cloudb_shared_request_type: 'flex' }),
      { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] },
      { 'x-vertex-ai-llm-shared-request-type': 'priority', ...traceHeaders().headers },
    );
    expect(response.status).toBe(200);
    expect(lastHeaders().sharedRequestType).toBe('flex');
  });

  it('refuses priority or flex with a regional or multi-regional cloudb_region, naming the key', async () => {
    for (const region of ['europe-west4', 'us']) {
      const config = vertexConfig({ cloudb_region: region, cloudb_shared_request_type: 'priority' });
      const refused = await client(gateway, config)
        .chat.completions.create(ask)
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      const error = refused as InstanceType<typeof OpenAI.BadRequestError>;
      expect(error.param).toBe('config.cloudb_shared_request_type');
      expect(error.message).toContain('global');
    }
  });

  it('refuses it beside cloudb_request_type dedicated, which never spills over to pay-as-you-go', async () => {
    const config = vertexConfig({ cloudb_request_type: 'dedicated', cloudb_shared_request_type: 'flex' });
    const refused = await client(gateway, config)
      .chat.completions.create(ask)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    const error = refused as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error.param).toBe('config.cloudb_shared_request_type');
    expect(error.message).toContain('dedicated');
  });

  it('refuses priority on a virtual key whose region is not global, when the call is made', async () => {
    const created = await fetch(`${gateway.url}/virtual-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
      body: JSON.stringify({ slug: 'vertex-regional', ...vertexTarget(fake) }),
    });
    expect(created.status).toBe(200);
    const before = fake.requests.length;
    const refused = await client(gateway, {
      virtual_key: 'vertex-regional',
      cloudb_shared_request_type: 'priority',
    })
      .chat.completions.create(ask)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    const error = refused as InstanceType<typeof OpenAI.BadRequestError>;
    // Known only once the key is read: named as the adapter names the keys it reads (cloudb_region).
    expect(error.param).toBe('cloudb_shared_request_type');
    expect(error.message).toContain('global');
    expect(fake.requests.length).toBe(before);
  });
});

/** Dollars of `prompt` and `completion` tokens at `price` (per million). */
function priced(price: { input: number; output: number }, prompt: number, completion: number): number {
  return (prompt * price.input + completion * price.output) * PER_MILLION;
}

describe("Vertex AI's Priority and Flex PayGo, priced on the traffic type the answer names", () => {
  const config = () => vertexConfig({ cloudb_shared_request_type: 'flex' });

  /** A JSON answer and a stream with the same counts, served on `trafficType`: each one's cost, from its
   * `x-gateway-cost` header (none for the stream) and its log record. */
  async function jsonAndStream(
    trafficType: string,
    model: string,
  ): Promise<{ header: number; json: number; stream: number; prompt: number; completion: number }> {
    const events = recordedStream(trafficType, model);
    fake.enqueue({ json: recordedAnswer(trafficType, model, events.at(-1).usageMetadata) });
    const plain = traceHeaders();
    const { data, response } = await client(gateway, config(), plain.headers)
      .chat.completions.create({ ...ask, model })
      .withResponse();
    expect((data.usage as any).traffic_type).toBe(trafficType);
    const [jsonRecord] = await logsOf(gateway, plain.traceId, 1);

    fake.enqueue({ events });
    const streamed = traceHeaders();
    const stream = await client(gateway, config(), streamed.headers).chat.completions.create({
      ...ask,
      model,
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: any;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage.traffic_type).toBe(trafficType);
    const [streamRecord] = await logsOf(gateway, streamed.traceId, 1);
    expect(streamRecord).toMatchObject({
      prompt_tokens: jsonRecord.prompt_tokens,
      completion_tokens: jsonRecord.completion_tokens,
    });
    return {
      header: Number(response.headers.get('x-gateway-cost')),
      json: jsonRecord.cost as number,
      stream: streamRecord.cost as number,
      prompt: jsonRecord.prompt_tokens as number,
      completion: jsonRecord.completion_tokens as number,
    };
  }

  it("prices ON_DEMAND_FLEX at Vertex AI's Flex discount (half), JSON and streamed alike", async () => {
    const cost = await jsonAndStream('ON_DEMAND_FLEX', 'gemini-2.5-flash');
    const expected = priced(FLASH, cost.prompt, cost.completion) / 2;
    expect(expected).toBeGreaterThan(0);
    expect(cost.header).toBeCloseTo(expected, 10);
    expect(cost.json).toBeCloseTo(expected, 12);
    expect(cost.stream).toBe(cost.json);
  });

  it("prices ON_DEMAND_PRIORITY at the model's own Priority prices, JSON and streamed alike", async () => {
    const cost = await jsonAndStream('ON_DEMAND_PRIORITY', 'gemini-2.5-pro');
    const expected = priced(PRO.service_tiers.priority, cost.prompt, cost.completion);
    expect(cost.header).toBeCloseTo(expected, 10);
    expect(cost.json).toBeCloseTo(expected, 12);
    expect(cost.stream).toBe(cost.json);
  });

  it('prices ON_DEMAND_PRIORITY at the standard prices of a model the table has no Priority prices for', async () => {
    const cost = await jsonAndStream('ON_DEMAND_PRIORITY', 'gemini-2.5-flash');
    const expected = priced(FLASH, cost.prompt, cost.completion);
    expect(cost.json).toBeCloseTo(expected, 12);
    expect(cost.stream).toBe(cost.json);
  });

  it('prices standard pay-as-you-go (ON_DEMAND) at the standard prices', async () => {
    const cost = await jsonAndStream('ON_DEMAND', 'gemini-2.5-pro');
    expect(cost.json).toBeCloseTo(priced(PRO, cost.prompt, cost.completion), 12);
    expect(cost.stream).toBe(cost.json);
  });

  it("prices a pass-through answer and stream on the traffic type Vertex's answer names", async () => {
    const path = '/projects/test-project/locations/global/publishers/google/models/gemini-2.5-flash';
    const send = async (action: string) => {
      const { traceId, headers } = traceHeaders();
      const response = await postWithConfig(
        gateway,
        `${path}:${action}`,
        config(),
        { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] },
        headers,
      );
      expect(response.status).toBe(200);
      await response.text();
      return (await logsOf(gateway, traceId, 1))[0];
    };
    const events = recordedStream('ON_DEMAND_FLEX');
    fake.enqueue({ json: recordedAnswer('ON_DEMAND_FLEX', 'gemini-2.5-flash', events.at(-1).usageMetadata) });
    const json = await send('generateContent');
    fake.enqueue({ events });
    const stream = await send('streamGenerateContent?alt=sse');
    const expected = priced(FLASH, json.prompt_tokens as number, json.completion_tokens as number) / 2;
    expect(json.cost).toBeCloseTo(expected, 12);
    expect(stream.cost).toBeCloseTo(expected, 12);
  });
});
