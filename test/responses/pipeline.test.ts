/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// POST /v1/responses runs the whole pipeline, as every model route does: virtual keys, stored configs,
// retries, the cache, guardrails and the log with tokens. The openai SDK against the gateway and the fake
// OpenAI chat API.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { logsOf } from '../routing/support.js';

let gateway: TestGateway;
let upstream: FakeUpstream;

beforeAll(async () => {
  [gateway, upstream] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'pipe' })]);
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

beforeEach(() => upstream.reset());

function sdk(headers: Record<string, string>): OpenAI {
  return new OpenAI({
    baseURL: gateway.url,
    apiKey: 'unused',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, ...headers },
  });
}

const target = () => ({ provider: 'openai', api_key: 'sk-pipe', custom_host: upstream.url });

async function manage(path: string, body: unknown): Promise<void> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
}

describe('the pipeline under /v1/responses', () => {
  it('reaches the provider through a virtual key', async () => {
    await manage('/virtual-keys', { slug: 'responses-vk', name: 'vk', ...target() });
    const response = await sdk({ 'x-gateway-virtual-key': 'responses-vk' }).responses.create({
      model: 'gpt-4o-mini',
      input: 'via a virtual key',
    });
    expect(response.output_text).toBe('[pipe] via a virtual key');
    expect(upstream.requests.at(-1)!.headers.authorization).toBe('Bearer sk-pipe');
  });

  it('runs a stored config: its cache answers the same request again, as a new response', async () => {
    await manage('/configs', {
      slug: 'responses-cached',
      name: 'cached',
      config: { ...target(), cache: { mode: 'simple' } },
    });
    const client = sdk({ 'x-gateway-config': 'responses-cached' });
    const first = await client.responses.create({ model: 'gpt-4o-mini', input: 'cache me' }).withResponse();
    const second = await client.responses.create({ model: 'gpt-4o-mini', input: 'cache me' }).withResponse();
    expect(first.response.headers.get('x-gateway-cache-status')).toBe('MISS');
    expect(second.response.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(upstream.requests).toHaveLength(1);
    expect(second.data.output_text).toBe(first.data.output_text);
    expect(second.data.id).not.toBe(first.data.id);
    expect((await client.responses.retrieve(second.data.id)).output_text).toBe(first.data.output_text);
  });

  it('retries, and records the call with its tokens under /v1/responses', async () => {
    upstream.enqueue({ status: 500 });
    const traceId = `responses-${Date.now()}`;
    const { data, response } = await sdk({
      'x-gateway-config': JSON.stringify({ ...target(), retry: { attempts: 1 } }),
      'x-gateway-trace-id': traceId,
    })
      .responses.create({ model: 'gpt-4o-mini', input: 'try again' })
      .withResponse();
    expect(data.status).toBe('completed');
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('1');
    const records = await logsOf(gateway, traceId, 1);
    const record = records.find((r) => !r.is_attempt)!;
    expect(record).toMatchObject({ path: '/v1/responses', status: 200, provider: 'openai' });
    expect(record.prompt_tokens).toBe(data.usage!.input_tokens);
    expect(record.completion_tokens).toBe(data.usage!.output_tokens);
  });

  it("applies the config's input guardrails", async () => {
    const client = sdk({
      'x-gateway-config': JSON.stringify({
        ...target(),
        input_guardrails: [
          { id: 'no-secrets', deny: true, 'default.contains': { operator: 'none', words: ['password'] } },
        ],
      }),
    });
    const error: any = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'my password is x' })
      .catch((e) => e);
    expect(error.status).toBe(446);
    expect(upstream.requests).toHaveLength(0);
    const ok = await client.responses.create({ model: 'gpt-4o-mini', input: 'hello' });
    expect(ok.status).toBe('completed');
  });

  it('puts hook_results in the first event of a stream, response.created, native or translated', async () => {
    const flag = { id: 'flag-pw', 'default.contains': { words: ['password'], operator: 'none' } };
    const translated = { provider: 'groq', api_key: 'gsk-pipe', custom_host: upstream.url };
    for (const config of [target(), translated]) {
      const client = sdk({ 'x-gateway-config': JSON.stringify({ ...config, input_guardrails: [flag] }) });
      const { data: stream, response } = await client.responses
        .create({ model: 'gpt-4o-mini', input: 'my password is hunter2', stream: true })
        .withResponse();
      expect(response.status).toBe(246);
      const events: any[] = [];
      for await (const event of stream) events.push(event);
      expect(events.at(-1).type).toBe('response.completed');
      const carrying = events.filter((event) => 'hook_results' in event);
      expect(carrying.map((event) => event.type)).toEqual(['response.created']);
      expect(carrying[0].hook_results).toMatchObject({
        before_request_hooks: [{ id: 'flag-pw', verdict: false }],
        after_request_hooks: [],
      });
    }
  });

  it("is governed by the workspace's rate-limit policies", async () => {
    await manage('/policies/rate-limits', {
      conditions: [{ key: 'metadata.case', value: 'responses-rate' }],
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpm',
      value: 1,
    });
    const client = sdk({
      'x-gateway-config': JSON.stringify(target()),
      'x-gateway-metadata': JSON.stringify({ case: 'responses-rate' }),
    });
    expect((await client.responses.create({ model: 'gpt-4o-mini', input: 'one' })).status).toBe('completed');
    const refused: any = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'two' })
      .catch((e) => e);
    expect(refused.status).toBe(429);
    expect([refused.error.type, refused.code]).toEqual(['requests', 'rate_limit_exceeded']);
    expect(refused.headers.get('x-gateway-rate-limit-policy')).toMatch(/^[0-9a-f-]{36}$/);
    expect(upstream.requests).toHaveLength(1);
  });

  it("keeps responses private to their workspace: another workspace's key finds nothing", async () => {
    const created = await fetch(`${gateway.url}/workspaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
      body: JSON.stringify({ name: 'Elsewhere', slug: `elsewhere-${Date.now()}` }),
    });
    expect(created.status).toBe(200);
    const otherKey = ((await created.json()) as { admin_key: { key: string } }).admin_key.key;
    const mine = sdk({ 'x-gateway-config': JSON.stringify(target()) });
    const theirs = new OpenAI({
      baseURL: gateway.url,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': otherKey, 'x-gateway-config': JSON.stringify(target()) },
    });
    const response = await mine.responses.create({ model: 'gpt-4o-mini', input: 'private' });
    for (const attempt of [
      () => theirs.responses.retrieve(response.id),
      () => theirs.responses.inputItems.list(response.id),
      () => theirs.responses.delete(response.id),
      () => theirs.responses.create({ model: 'gpt-4o-mini', input: 'x', previous_response_id: response.id }),
    ]) {
      const error: any = await Promise.resolve(attempt()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error?.status).toBe(404);
    }
    expect((await mine.responses.retrieve(response.id)).id).toBe(response.id);
  });
});
