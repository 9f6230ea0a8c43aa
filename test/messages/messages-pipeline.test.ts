// /v1/messages runs the whole pipeline: a virtual key and a stored config choose the target, the simple
// cache answers a repeated request (a native stream replayed event for event), input guardrails deny
// before any provider is called, and rate-limit policies refuse in Anthropic's error shape.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAnthropicStreamFixture } from '../fakes/anthropic/fixtures.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectAnthropicShape, postRawSse } from './anthropic-shapes.js';

const API_KEY = 'sk-ant-pipeline';

let gateway: TestGateway;
let anthropic: FakeAnthropic;
let openai: FakeUpstream;

function anthropicClient(headers: Record<string, string>) {
  return new Anthropic({
    baseURL: gateway.origin,
    apiKey: 'unused',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, ...headers },
  });
}

async function admin(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
    body: JSON.stringify(body),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

const anthropicTarget = () => ({ provider: 'anthropic', api_key: API_KEY, custom_host: anthropic.url });
const ask = (content: string) => ({
  model: 'claude-opus-5',
  max_tokens: 64,
  messages: [{ role: 'user' as const, content }],
});

beforeAll(async () => {
  anthropic = await startFakeAnthropic({ apiKey: API_KEY });
  openai = await startFakeOpenAI({ name: 'stored' });
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await anthropic?.close();
  await openai?.close();
});

describe('the OpenAPI document', () => {
  it('lists both routes with their request schemas', async () => {
    const document = (await (await fetch(`${gateway.url}/openapi.json`)).json()) as {
      paths: Record<string, { post?: { requestBody?: { content: Record<string, { schema: unknown }> } } }>;
    };
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      const schema = document.paths[path]?.post?.requestBody?.content['application/json'].schema as {
        required?: string[];
      };
      expect(schema?.required, path).toContain('messages');
    }
  });
});

describe('targets chosen by the gateway', () => {
  it('reaches Anthropic through a virtual key', async () => {
    await admin('/virtual-keys', { slug: 'claude-vk', name: 'claude', ...anthropicTarget() });
    const message = await anthropicClient({ 'x-gateway-virtual-key': 'claude-vk' }).messages.create(
      ask('Hi'),
    );
    expectAnthropicShape('Message', message);
    expect(anthropic.requests.at(-1)!.headers['x-api-key']).toBe(API_KEY);
  });

  it('follows a stored config to a translated provider', async () => {
    await admin('/configs', {
      slug: 'messages-cfg',
      config: { provider: 'openai', api_key: 'sk-stored', custom_host: openai.url },
    });
    const message = await anthropicClient({ 'x-gateway-config': 'messages-cfg' }).messages.create(
      ask('Stored?'),
    );
    expect(message.content).toEqual([{ type: 'text', text: '[stored] Stored?' }]);
    expect(openai.requests.at(-1)!.headers.authorization).toBe('Bearer sk-stored');
  });
});

describe('the simple cache', () => {
  it('answers a repeated request without calling Anthropic', async () => {
    const config = { ...anthropicTarget(), cache: { mode: 'simple' } };
    const client = anthropicClient({ 'x-gateway-config': JSON.stringify(config) });
    const before = anthropic.requests.length;
    const first = await client.messages.create(ask('Cache me')).withResponse();
    const second = await client.messages.create(ask('Cache me')).withResponse();
    expect(first.response.headers.get('x-gateway-cache-status')).toBe('MISS');
    expect(second.response.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(second.data).toEqual(first.data);
    expect(anthropic.requests.length).toBe(before + 1);
  });

  it('replays a cached native stream event for event', async () => {
    const config = { ...anthropicTarget(), cache: { mode: 'simple' } };
    const headers = { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': JSON.stringify(config) };
    const body = { ...ask('Cache my stream'), stream: true };
    const before = anthropic.requests.length;
    const first = await postRawSse(`${gateway.url}/messages`, headers, body);
    const second = await postRawSse(`${gateway.url}/messages`, headers, body);
    expect(second.headers.get('x-gateway-cache-status')).toBe('HIT');
    const lines = readAnthropicStreamFixture('anthropic-text.chunks.txt');
    expect(first.frames.map((frame) => frame.data)).toEqual(lines);
    expect(second.frames).toEqual(first.frames);
    expect(anthropic.requests.length).toBe(before + 1);
  });
});

describe('guardrails and rate limits', () => {
  it('denies with an input guardrail before calling the provider', async () => {
    const config = {
      ...anthropicTarget(),
      input_guardrails: [
        { id: 'no-secrets', deny: true, 'default.contains': { words: ['password'], operator: 'none' } },
      ],
    };
    const before = anthropic.requests.length;
    const response = await postWithConfig(gateway, '/messages', config, ask('my password is hunter2'));
    expect(response.status).toBe(446);
    expectAnthropicShape('ErrorResponse', await response.json());
    expect(anthropic.requests.length).toBe(before);
  });

  it('answers 246 with hook_results beside a translated Message when a check fails without deny', async () => {
    const config = {
      provider: 'openai',
      api_key: 'sk-stored',
      custom_host: openai.url,
      input_guardrails: [{ id: 'flag-pw', 'default.contains': { words: ['password'], operator: 'none' } }],
    };
    const response = await postWithConfig(gateway, '/messages', config, ask('my password is hunter2'));
    expect(response.status).toBe(246);
    const body = (await response.json()) as { hook_results: { before_request_hooks: unknown[] } };
    expectAnthropicShape('Message', body);
    expect(body.hook_results.before_request_hooks).toMatchObject([{ id: 'flag-pw', verdict: false }]);

    const raw = await postRawSse(
      `${gateway.url}/messages`,
      { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': JSON.stringify(config) },
      { ...ask('my password is hunter2'), stream: true },
    );
    expect(raw.status).toBe(246);
    const start = JSON.parse(raw.frames[0].data) as { type: string; hook_results: typeof body.hook_results };
    expect(start.type).toBe('message_start');
    expect(start.hook_results.before_request_hooks).toMatchObject([{ id: 'flag-pw', verdict: false }]);
  });

  it('refuses past a rate-limit policy with rate_limit_error', async () => {
    await admin('/policies/rate-limits', {
      conditions: [{ key: 'metadata.case', value: 'messages' }],
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpm',
      value: 1,
    });
    const client = anthropicClient({
      'x-gateway-config': JSON.stringify(anthropicTarget()),
      'x-gateway-metadata': JSON.stringify({ case: 'messages' }),
    });
    await client.messages.create(ask('one'));
    const refused = await client.messages.create(ask('two')).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    const body = (refused as InstanceType<typeof Anthropic.RateLimitError>).error;
    expectAnthropicShape('ErrorResponse', body);
    expect(body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(
      (refused as InstanceType<typeof Anthropic.RateLimitError>).headers.get('x-gateway-rate-limit-policy'),
    ).toMatch(/^[0-9a-f-]{36}$/);
  });
});
