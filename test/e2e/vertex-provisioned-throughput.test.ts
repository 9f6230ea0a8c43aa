/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// Vertex AI calls served from an organisation's Provisioned Throughput are prepaid: Gemini's answer says so in
// `usageMetadata.trafficType` (`PROVISIONED_THROUGHPUT`, else `ON_DEMAND`), on every event of a stream. The
// gateway keeps it in the usage (`traffic_type`) and prices those tokens at 0. The streams are the recorded
// Vertex samples, their `modelVersion` set to a model the shipped price table has.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGoogleFixture, readGoogleStream } from '../fakes/google/fixtures.js';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-ai/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { logsOf, traceHeaders } from '../routing/support.js';
import { vertexTarget } from '../helpers/provider-targets.js';

const PER_MILLION = 1e-6;
// gemini-2.5-flash on the shipped table: $0.30 in, $2.50 out (thoughts at the output price).
const flashCost = (prompt: number, completion: number) => (prompt * 0.3 + completion * 2.5) * PER_MILLION;

let gateway: TestGateway;
let fake: FakeVertex;

beforeAll(async () => {
  fake = await startFakeVertex();
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

/** A recorded Vertex stream's events, as gemini-2.5-flash. */
function recordedStream(name: string): any[] {
  return readGoogleStream(name).map((line) => ({ ...JSON.parse(line), modelVersion: 'gemini-2.5-flash' }));
}

/** The recorded plain answer, as Vertex sends it: with the traffic type that served it. */
function recordedAnswer(trafficType: string): any {
  const answer = readGoogleFixture('google-text.json') as any;
  return {
    ...answer,
    modelVersion: 'gemini-2.5-flash',
    usageMetadata: { ...answer.usageMetadata, trafficType },
  };
}

async function post(
  route: string,
  body: Record<string, unknown>,
  config: Record<string, unknown> = vertexTarget(fake),
  extraHeaders: Record<string, string> = {},
): Promise<{ response: Response; traceId: string }> {
  const { traceId, headers } = traceHeaders();
  const response = await postWithConfig(gateway, route, config, body, { ...headers, ...extraHeaders });
  return { response, traceId };
}

function chat(
  body: Record<string, unknown>,
  config?: Record<string, unknown>,
): Promise<{ response: Response; traceId: string }> {
  return post(
    '/chat/completions',
    { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }], ...body },
    config,
  );
}

function usageChunk(text: string): any {
  const events = text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice('data: '.length)));
  return events.find((event) => event.usage)?.usage;
}

describe('Vertex AI Provisioned Throughput', () => {
  it('prices an answer served from Provisioned Throughput at 0 and keeps its traffic type in the usage', async () => {
    fake.enqueue({ json: recordedAnswer('PROVISIONED_THROUGHPUT') });
    const { response, traceId } = await chat({});
    expect(response.status).toBe(200);
    const completion = (await response.json()) as any;
    expect(completion.usage).toMatchObject({ total_tokens: 281, traffic_type: 'PROVISIONED_THROUGHPUT' });
    expect(response.headers.get('x-gateway-cost')).toBe('0');
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toMatchObject({ cost: 0, prompt_tokens: 9, completion_tokens: 272 });
    expect((record.response_body as any).usage.traffic_type).toBe('PROVISIONED_THROUGHPUT');
  });

  it('prices an on-demand answer at the model prices', async () => {
    fake.enqueue({ json: recordedAnswer('ON_DEMAND') });
    const { response, traceId } = await chat({});
    const completion = (await response.json()) as any;
    expect(completion.usage.traffic_type).toBe('ON_DEMAND');
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record.cost).toBeCloseTo(flashCost(9, 272), 12);
  });

  it('prices a stream served from Provisioned Throughput at 0, its usage chunk naming the traffic type', async () => {
    const events = recordedStream('google-stream-no-args-tool-call.chunks.txt');
    fake.enqueue({ events });
    const { response, traceId } = await chat({ stream: true, stream_options: { include_usage: true } });
    expect(response.status).toBe(200);
    const usage = usageChunk(await response.text());
    const last = events.at(-1).usageMetadata;
    expect(usage).toMatchObject({
      prompt_tokens: last.promptTokenCount,
      total_tokens: last.totalTokenCount,
      traffic_type: 'PROVISIONED_THROUGHPUT',
    });
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toMatchObject({ cost: 0, prompt_tokens: last.promptTokenCount });
  });

  it('prices an on-demand stream at the model prices', async () => {
    const events = recordedStream('google-vertex-stream-tool-call-arguments-nested.1.chunks.txt');
    fake.enqueue({ events });
    const { response, traceId } = await chat({ stream: true });
    expect(response.status).toBe(200);
    await response.text();
    const last = events.at(-1).usageMetadata;
    expect(last.trafficType).toBe('ON_DEMAND');
    const [record] = await logsOf(gateway, traceId, 1);
    const completion = last.candidatesTokenCount + (last.thoughtsTokenCount ?? 0);
    expect(record.cost).toBeCloseTo(flashCost(last.promptTokenCount, completion), 12);
  });

  it('prices a Responses or Messages call translated for Gemini on its traffic type too', async () => {
    fake.enqueue({ json: recordedAnswer('PROVISIONED_THROUGHPUT') });
    const responses = await post('/responses', { model: 'gemini-2.5-flash', input: 'Hi' });
    expect(responses.response.status).toBe(200);
    expect((await logsOf(gateway, responses.traceId, 1))[0]).toMatchObject({ prompt_tokens: 9, cost: 0 });

    fake.enqueue({ events: recordedStream('google-stream-no-args-tool-call.chunks.txt') });
    const messages = await post('/messages', {
      model: 'gemini-2.5-flash',
      max_tokens: 1024,
      stream: true,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(messages.response.status).toBe(200);
    await messages.response.text();
    expect((await logsOf(gateway, messages.traceId, 1))[0]).toMatchObject({ prompt_tokens: 249, cost: 0 });
  });

  async function passthrough(action: string): Promise<{ response: Response; traceId: string }> {
    const { traceId, headers } = traceHeaders();
    const response = await postWithConfig(
      gateway,
      `/projects/test-project/locations/europe-west4/publishers/google/models/gemini-2.5-flash:${action}`,
      vertexTarget(fake),
      { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] },
      headers,
    );
    return { response, traceId };
  }

  it("prices a pass-through answer served from Provisioned Throughput at 0, as Vertex's answer says", async () => {
    fake.enqueue({ json: recordedAnswer('PROVISIONED_THROUGHPUT') });
    const { response, traceId } = await passthrough('generateContent');
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).usageMetadata.trafficType).toBe('PROVISIONED_THROUGHPUT');
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toMatchObject({ endpoint: 'passthrough', cost: 0, prompt_tokens: 9 });
  });

  it('prices a pass-through stream served from Provisioned Throughput at 0, read from its events', async () => {
    const events = recordedStream('google-stream-no-args-tool-call.chunks.txt');
    fake.enqueue({ events });
    const { response, traceId } = await passthrough('streamGenerateContent?alt=sse');
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"trafficType":"PROVISIONED_THROUGHPUT"');
    const [record] = await logsOf(gateway, traceId, 1);
    const last = events.at(-1).usageMetadata;
    expect(record).toMatchObject({ endpoint: 'passthrough', cost: 0, prompt_tokens: last.promptTokenCount });
  });
});

// claude-sonnet-4-5 on the shipped table (Vertex AI prices Anthropic's models at Anthropic's): $3 in, $15
// out; the recorded answer counts 12 in, 29 out.
const claudeCost = (12 * 3 + 29 * 15) * PER_MILLION;
const CLAUDE = 'claude-sonnet-4-5@20250929';

describe("a target's cloudb_request_type (X-Vertex-AI-LLM-Request-Type)", () => {
  const requestType = () => fake.requests.at(-1)!.headers['x-vertex-ai-llm-request-type'];

  it('asks Vertex for dedicated or shared capacity on every call of the target, and for neither without it', async () => {
    fake.enqueue({ json: recordedAnswer('PROVISIONED_THROUGHPUT') });
    expect((await chat({}, vertexTarget(fake, { cloudb_request_type: 'dedicated' }))).response.status).toBe(
      200,
    );
    expect(requestType()).toBe('dedicated');

    fake.enqueue({ events: recordedStream('google-vertex-stream-tool-call-arguments-nested.1.chunks.txt') });
    const stream = await chat({ stream: true }, vertexTarget(fake, { cloudb_request_type: 'shared' }));
    await stream.response.text();
    expect(requestType()).toBe('shared');

    const claude = await post(
      '/messages',
      { model: CLAUDE, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] },
      vertexTarget(fake, { cloudb_request_type: 'dedicated' }),
    );
    expect(claude.response.status).toBe(200);
    expect(fake.requests.at(-1)!.path).toContain(':rawPredict');
    expect(requestType()).toBe('dedicated');

    const embedding = await post(
      '/embeddings',
      { model: 'text-embedding-005', input: 'Hi' },
      vertexTarget(fake, { cloudb_request_type: 'shared' }),
    );
    expect(embedding.response.status).toBe(200);
    expect(requestType()).toBe('shared');

    fake.enqueue({ json: recordedAnswer('ON_DEMAND') });
    await chat({});
    expect(requestType()).toBeUndefined();
  });

  it("is sent on a pass-through call, over a client's own header", async () => {
    fake.enqueue({ json: recordedAnswer('PROVISIONED_THROUGHPUT') });
    const { response } = await post(
      '/projects/test-project/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent',
      { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] },
      vertexTarget(fake, { cloudb_request_type: 'dedicated' }),
      { 'x-vertex-ai-llm-request-type': 'shared' },
    );
    expect(response.status).toBe(200);
    expect(requestType()).toBe('dedicated');
  });

  it("lets forward_headers pass a client's header through, which the target's own setting wins over", async () => {
    const forwarding = { forward_headers: ['x-vertex-ai-llm-request-type'] };
    fake.enqueue({ json: recordedAnswer('ON_DEMAND') });
    const body = { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }] };
    const header = { 'x-vertex-ai-llm-request-type': 'shared' };
    await post('/chat/completions', body, vertexTarget(fake, forwarding), header);
    expect(requestType()).toBe('shared');
    fake.enqueue({ json: recordedAnswer('PROVISIONED_THROUGHPUT') });
    await post(
      '/chat/completions',
      body,
      vertexTarget(fake, { ...forwarding, cloudb_request_type: 'dedicated' }),
      header,
    );
    expect(requestType()).toBe('dedicated');
  });

  it('refuses a value Vertex does not know, naming the key', async () => {
    const { response } = await chat({}, vertexTarget(fake, { cloudb_request_type: 'provisioned' }));
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as any;
    expect(error.param).toBe('config.cloudb_request_type');
  });

  it('prices a Claude call of a dedicated target at 0: Vertex served it from Provisioned Throughput or refused it', async () => {
    const dedicated = vertexTarget(fake, { cloudb_request_type: 'dedicated' });
    const asked = { model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }] };

    const plain = await chat(asked, dedicated);
    expect(((await plain.response.json()) as any).usage.traffic_type).toBe('PROVISIONED_THROUGHPUT');
    expect((await logsOf(gateway, plain.traceId, 1))[0].cost).toBe(0);

    const streamed = await chat(
      { ...asked, stream: true, stream_options: { include_usage: true } },
      dedicated,
    );
    expect(usageChunk(await streamed.response.text())).toMatchObject({
      prompt_tokens: 12,
      traffic_type: 'PROVISIONED_THROUGHPUT',
    });
    expect((await logsOf(gateway, streamed.traceId, 1))[0].cost).toBe(0);

    const native = { ...asked, max_tokens: 64 };
    const messages = await post('/messages', native, dedicated);
    expect(((await messages.response.json()) as any).usage).not.toHaveProperty('traffic_type');
    expect((await logsOf(gateway, messages.traceId, 1))[0]).toMatchObject({ prompt_tokens: 12, cost: 0 });

    const messagesStream = await post('/messages', { ...native, stream: true }, dedicated);
    expect(await messagesStream.response.text()).not.toContain('traffic_type');
    expect((await logsOf(gateway, messagesStream.traceId, 1))[0]).toMatchObject({
      prompt_tokens: 12,
      cost: 0,
    });
  });

  it('prices a Claude call of any other target at the model prices: its answer names no traffic type', async () => {
    for (const config of [vertexTarget(fake), vertexTarget(fake, { cloudb_request_type: 'shared' })]) {
      const { response, traceId } = await chat({ model: CLAUDE }, config);
      expect(((await response.json()) as any).usage).not.toHaveProperty('traffic_type');
      expect((await logsOf(gateway, traceId, 1))[0].cost).toBeCloseTo(claudeCost, 12);
    }
  });
});
