/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// Vertex AI's Priority PayGo and Flex PayGo: a target asks for them with `cloudb_shared_request_type`, sent as
// Vertex's X-Vertex-AI-LLM-Shared-Request-Type (global endpoint only), beside `cloudb_request_type`'s
// X-Vertex-AI-LLM-Request-Type. The client is the `openai` SDK; Vertex is the fake, replaying the recorded
// Vertex answers and streams.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGoogleFixture, readGoogleStream } from '../fakes/google/fixtures.js';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-ai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, traceHeaders } from '../routing/support.js';

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

function vertexConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    provider: 'vertex-ai',
    cloudb_project_id: 'test-project',
    cloudb_region: 'global',
    cloudb_service_account_json: fake.serviceAccount,
    custom_host: fake.url,
    ...extra,
  };
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

/** A recorded Vertex stream's events, as gemini-2.5-flash served on `trafficType` (on every event, as Vertex
 * names it). */
function recordedStream(trafficType: string): any[] {
  return readGoogleStream('google-vertex-stream-tool-call-arguments-nested.1.chunks.txt').map((line) => {
    const event = JSON.parse(line);
    return {
      ...event,
      modelVersion: 'gemini-2.5-flash',
      usageMetadata: { ...event.usageMetadata, trafficType },
    };
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
    const response = await fetch(
      `${gateway.url}/projects/test-project/locations/global/publishers/google/models/gemini-2.5-flash:generateContent`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gateway-api-key': gateway.adminKey,
          'x-gateway-config': JSON.stringify(vertexConfig({ cloudb_shared_request_type: 'flex' })),
          'x-vertex-ai-llm-shared-request-type': 'priority',
          ...traceHeaders().headers,
        },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
      },
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
      body: JSON.stringify({
        slug: 'vertex-regional',
        provider: 'vertex-ai',
        cloudb_project_id: 'test-project',
        cloudb_region: 'europe-west4',
        cloudb_service_account_json: fake.serviceAccount,
        custom_host: fake.url,
      }),
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
