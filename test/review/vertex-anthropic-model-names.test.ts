// Vertex AI users name Claude models as Model Garden does, `anthropic.claude-…@version`; the gateway sends
// them to Anthropic's publisher (rawPredict / streamRawPredict, id without the prefix) exactly as it does
// `claude-…`. The openai SDK → the gateway → the fake Vertex AI replaying recorded Anthropic answers.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-ai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { vertexTarget } from '../helpers/provider-targets.js';
import { readChatStream } from '../helpers/chat-stream.js';

let gateway: TestGateway;
let fake: FakeVertex;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeVertex();
  gateway = await startGateway();
  client = gatewayOpenAI(gateway, vertexTarget(fake));
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

const MODEL = 'anthropic.claude-3-5-sonnet@20240620';
const anthropicPath = (action: string) =>
  `/v1/projects/test-project/locations/europe-west4/publishers/anthropic/models/claude-3-5-sonnet%4020240620:${action}`;
const lastRequest = () => fake.requests.at(-1)!;

describe('vertex-ai with anthropic.claude-… model names', () => {
  it('answers through rawPredict with the Anthropic body', async () => {
    fake.enqueue({ anthropicFixture: 'anthropic-text' });
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(completion.choices[0]!.message.content).toBeTruthy();
    expect(lastRequest().path).toBe(anthropicPath('rawPredict'));
    expect((lastRequest().body as { anthropic_version?: string }).anthropic_version).toBe(
      'vertex-2023-10-16',
    );
  });

  it('streams through streamRawPredict', async () => {
    fake.enqueue({ anthropicFixture: 'anthropic-text' });
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
    });
    const { text } = await readChatStream(stream);
    expect(text).toBeTruthy();
    expect(lastRequest().path).toBe(anthropicPath('streamRawPredict'));
  });
});
