/**
 * Bedrock's streaming answers through the pass-through — ConverseStream and InvokeModelWithResponseStream,
 * AWS event-stream frames rather than server-sent events — are relayed byte for byte, and their model and
 * usage recorded, priced and settled against a rate-limit policy's token reservation; so is the usage of an
 * InvokeModel answer whose body carries none, from Bedrock's headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { client } from '../management/http.js';
import { uniqueId, waitForLogs } from './support.js';

let gateway: TestGateway;
let bedrock: FakeBedrock;

beforeAll(async () => {
  [gateway, bedrock] = await Promise.all([startGateway(), startFakeBedrock()]);
});
afterAll(async () => {
  await gateway?.close();
  await bedrock?.close();
});

const config = () => ({
  provider: 'bedrock',
  cloudc_access_key_id: 'AKIDFAKEBEDROCK',
  cloudc_secret_access_key: 'fake-secret-key',
  cloudc_region: 'us-east-1',
  custom_host: bedrock.url,
});

async function passThrough(path: string, body: unknown, metadata: Record<string, string> = {}) {
  const traceId = uniqueId('pt-bedrock-stream');
  const response = await postWithConfig(gateway, path, config(), body, {
    'x-gateway-trace-id': traceId,
    'x-gateway-metadata': JSON.stringify(metadata),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
  const bytes = Buffer.from(await response.arrayBuffer());
  const [record] = await waitForLogs(gateway, { trace_id: traceId });
  return { response, bytes, record };
}

const converse = { messages: [{ role: 'user', content: [{ text: 'hello' }] }] };
const claude = {
  anthropic_version: 'bedrock-2023-05-31',
  max_tokens: 100,
  messages: [{ role: 'user', content: 'hello' }],
};

describe('a Bedrock stream through the pass-through', () => {
  it("ConverseStream: the metadata event's usage, the path's model, priced", async () => {
    const { bytes, record } = await passThrough('/model/amazon.nova-pro-v1%3A0/converse-stream', converse);
    expect(bytes.length).toBeGreaterThan(0);
    expect(record).toMatchObject({
      model: 'amazon.nova-pro-v1:0',
      prompt_tokens: 22,
      completion_tokens: 55,
      total_tokens: 77,
    });
    expect(record.cost).toBeGreaterThan(0);
  });

  it("InvokeModelWithResponseStream of Claude: the Anthropic events' model and usage", async () => {
    const { record } = await passThrough(
      '/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke-with-response-stream',
      claude,
    );
    expect(record).toMatchObject({
      model: 'claude-sonnet-4-5-20250929',
      prompt_tokens: 12,
      completion_tokens: 30,
      total_tokens: 42,
    });
    expect(record.cost).toBeGreaterThan(0);
  });

  it("settles a rate-limit policy's token reservation to the stream's usage", async () => {
    const created = await client(gateway.url, gateway.adminKey).post('/policies/rate-limits', {
      conditions: [{ key: 'metadata.case', value: 'bedrock-stream' }],
      group_by: [{ key: 'api_key' }],
      type: 'tokens',
      unit: 'rpd',
      value: 100_000,
    });
    expect(created.status, created.text).toBe(200);
    const reservation = Math.ceil(Buffer.byteLength(JSON.stringify(converse)) / 4);
    const path = '/model/amazon.nova-pro-v1%3A0/converse-stream';
    const first = await passThrough(path, converse, { case: 'bedrock-stream' });
    expect(first.response.headers.get('x-ratelimit-remaining-tokens')).toBe(String(100_000 - reservation));
    const second = await passThrough(path, converse, { case: 'bedrock-stream' });
    // The first call's reservation became its 77 tokens.
    expect(second.response.headers.get('x-ratelimit-remaining-tokens')).toBe(
      String(100_000 - 77 - reservation),
    );
  });
});

describe("a Bedrock InvokeModel answer whose body carries no usage: Bedrock's headers", () => {
  async function invoke(path: string, body: unknown) {
    const traceId = uniqueId('pt-bedrock-invoke');
    const response = await postWithConfig(gateway, path, config(), body, {
      'x-gateway-trace-id': traceId,
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    const [record] = await waitForLogs(gateway, { trace_id: traceId });
    return record;
  }

  it('Meta Llama', async () => {
    bedrock.enqueue({
      kind: 'json',
      body: {
        generation: 'Hello there',
        prompt_token_count: 18,
        generation_token_count: 2,
        stop_reason: 'stop',
      },
      headers: { 'x-amzn-bedrock-input-token-count': '18', 'x-amzn-bedrock-output-token-count': '2' },
    });
    const record = await invoke('/model/meta.llama3-1-8b-instruct-v1%3A0/invoke', {
      prompt: 'hello',
      max_gen_len: 64,
    });
    expect(record).toMatchObject({
      model: 'meta.llama3-1-8b-instruct-v1:0',
      prompt_tokens: 18,
      completion_tokens: 2,
      total_tokens: 20,
    });
  });

  it('Titan embeddings, priced', async () => {
    bedrock.enqueue({
      kind: 'json',
      body: { embedding: [0.1, -0.2, 0.3], inputTextTokenCount: 5 },
      headers: { 'x-amzn-bedrock-input-token-count': '5', 'x-amzn-bedrock-output-token-count': '0' },
    });
    const record = await invoke('/model/amazon.titan-embed-text-v2%3A0/invoke', { inputText: 'hello there' });
    expect(record).toMatchObject({ prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 });
    expect(record.cost).toBeGreaterThan(0);
  });
});
