/**
 * The model a pass-through's record names and prices: the one the provider says answered, in its own
 * field (Gemini's `modelVersion`), else the one the request named (in its path, as Gemini's and Bedrock's
 * APIs name it, or in its JSON body).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/server.js';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { uniqueId, waitForLogs } from './support.js';

let gateway: TestGateway;
let google: FakeGoogle;
let bedrock: FakeBedrock;

beforeAll(async () => {
  [gateway, google, bedrock] = await Promise.all([startGateway(), startFakeGoogle(), startFakeBedrock()]);
});
afterAll(async () => {
  await gateway?.close();
  await google?.close();
  await bedrock?.close();
});

async function passThrough(path: string, config: Record<string, unknown>, body: unknown) {
  const traceId = uniqueId('pt-model');
  const response = await postWithConfig(gateway, path, config, body, { 'x-gateway-trace-id': traceId });
  expect(response.status).toBe(200);
  const answer = (await response.json()) as Record<string, unknown>;
  const [record] = await waitForLogs(gateway, { trace_id: traceId });
  return { answer, record };
}

describe('a pass-through record names the model and prices it', () => {
  it("Gemini's generateContent: the modelVersion the answer gives", async () => {
    const { answer, record } = await passThrough(
      '/models/gemini-2.0-flash:generateContent',
      { provider: 'google', api_key: google.apiKey, custom_host: google.url },
      { contents: [{ role: 'user', parts: [{ text: 'hello' }] }] },
    );
    expect(typeof answer.modelVersion).toBe('string');
    expect(record.model).toBe(answer.modelVersion);
    expect(record.prompt_tokens).toBeGreaterThan(0);
  });

  it("Bedrock's Converse: the model the path names", async () => {
    const { answer, record } = await passThrough(
      '/model/amazon.nova-pro-v1%3A0/converse',
      {
        provider: 'bedrock',
        cloudc_access_key_id: 'AKIDFAKEBEDROCK',
        cloudc_secret_access_key: 'fake-secret-key',
        cloudc_region: 'us-east-1',
        custom_host: bedrock.url,
      },
      { messages: [{ role: 'user', content: [{ text: 'hello' }] }] },
    );
    expect(answer.usage).toBeDefined();
    expect(record.model).toBe('amazon.nova-pro-v1:0');
    expect(record.prompt_tokens).toBeGreaterThan(0);
    expect(record.cost).toBeGreaterThan(0);
  });
});
