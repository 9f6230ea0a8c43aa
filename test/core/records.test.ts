/**
 * Every call leaves a log record: who called, the trace it belongs to, where it went, how it went, its
 * tokens and bodies. Read back through GET /v1/logs (filters, paging) and GET /v1/logs/{id}. Errors are
 * told apart by `x-gateway-error-source`.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/store/types.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  CHAT_BODY,
  PROVIDER_KEY,
  expectOpenAIError,
  listLogs,
  providerHeaders,
  sseData,
  uniqueId,
  waitForLogs,
} from './support.js';

let gateway: TestGateway;
let fake: FakeUpstream;
let keyId: string;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'rec' });
  gateway = await startGateway();
  const key = await gateway.server.deps.lookups.apiKey(gateway.adminKey);
  keyId = key!.id;
});
afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

function chat(extraHeaders: Record<string, string>, body: object = CHAT_BODY): Promise<Response> {
  return fetch(`${gateway.url}/chat/completions`, {
    method: 'POST',
    headers: providerHeaders(gateway, fake, { 'content-type': 'application/json', ...extraHeaders }),
    body: JSON.stringify(body),
  });
}

async function getLog(id: string): Promise<Response> {
  return fetch(`${gateway.url}/logs/${id}`, { headers: { 'x-gateway-api-key': gateway.adminKey } });
}

describe('a non-streamed call', () => {
  it('is recorded with ids, times, caller, route, status, timings, usage, trace, metadata and bodies', async () => {
    const traceId = uniqueId('trace');
    const before = Date.now();
    const response = await chat({
      'x-gateway-trace-id': traceId,
      'x-gateway-span-id': 'span-abc',
      'x-gateway-parent-span-id': 'parent-xyz',
      'x-gateway-span-name': 'summarise step',
      'x-gateway-metadata': JSON.stringify({ team: 'core', run: 7, flag: true }),
    });
    const completion = (await response.json()) as OpenAI.Chat.ChatCompletion;
    const after = Date.now();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-trace-id')).toBe(traceId);

    const [record] = await waitForLogs(gateway, { trace_id: traceId });
    expect(record.id).toMatch(/^log_\w+$/);
    expect(record.created_at_ms).toBeGreaterThanOrEqual(before);
    expect(record.created_at_ms).toBeLessThanOrEqual(after);
    expect(record).toMatchObject({
      workspace_id: gateway.server.bootstrap.workspace.id,
      organisation_id: gateway.server.bootstrap.workspace.organisation_id,
      api_key_id: keyId,
      trace_id: traceId,
      span_id: 'span-abc',
      parent_span_id: 'parent-xyz',
      span_name: 'summarise step',
      method: 'POST',
      path: '/v1/chat/completions',
      endpoint: 'chat',
      provider: 'openai',
      model: 'gpt-4o-mini',
      status: 200,
      is_attempt: false,
      stream: false,
      retry_count: 0,
      error_code: null,
      error_message: null,
      metadata: { team: 'core', run: '7', flag: 'true' },
      prompt_tokens: completion.usage!.prompt_tokens,
      completion_tokens: completion.usage!.completion_tokens,
      total_tokens: completion.usage!.total_tokens,
    });
    expect(typeof record.target).toBe('string');
    expect(record.latency_ms).toBeGreaterThan(0);
    expect(record.latency_ms).toBeLessThanOrEqual(after - before + 5);
    expect(record.ttfb_ms).not.toBeNull();
    expect(record.ttfb_ms!).toBeGreaterThan(0);
    expect(record.ttfb_ms!).toBeLessThanOrEqual(record.latency_ms);
    expect(record.request_body).toEqual(CHAT_BODY);
    expect(record.response_body).toEqual(completion);

    const one = await getLog(record.id);
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual(record);

    // Answered by its only call: the request's record is the whole story, with no attempt record beside it.
    const withAttempts = await waitForLogs(gateway, { trace_id: traceId }, 1, { withAttempts: true });
    expect(withAttempts.map((candidate) => candidate.is_attempt)).toEqual([false]);
  });

  it("keeps a body's metadata within OpenAI's limits as it came: sent to the provider, recorded", async () => {
    // 16 pairs, one with a key of 64 emoji and a value of 512: characters are code points, as OpenAI counts.
    const EMOJI = '\u{1F600}';
    const metadata: Record<string, string> = { [EMOJI.repeat(64)]: EMOJI.repeat(512) };
    for (let i = 1; i < 16; i++) metadata[`k${i}`] = `v${i}`;
    const traceId = uniqueId('body-metadata');
    const body = { ...CHAT_BODY, metadata };
    const response = await chat({ 'x-gateway-trace-id': traceId }, body);
    expect(response.status, await response.clone().text()).toBe(200);
    await response.arrayBuffer();
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect((sent.body as { metadata?: unknown }).metadata).toEqual(metadata);
    const [record] = await waitForLogs(gateway, { trace_id: traceId });
    expect(record.request_body).toEqual(body);
  });

  it('gets a trace id when it sends none, echoed and recorded', async () => {
    const tag = uniqueId('no-trace');
    const response = await chat({ 'x-gateway-metadata': JSON.stringify({ tag }) });
    await response.arrayBuffer();
    const traceId = response.headers.get('x-gateway-trace-id');
    expect(traceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const [record] = await waitForLogs(gateway, { 'metadata.tag': tag });
    expect(record.trace_id).toBe(traceId);
    expect(record.span_id).toMatch(/^[0-9a-f]{16}$/);
    expect(record.parent_span_id).toBeNull();
    expect(record.span_name).toBeNull();
  });

  it('secrets in the body are redacted in the record', async () => {
    const traceId = uniqueId('redact');
    const response = await chat(
      { 'x-gateway-trace-id': traceId },
      { ...CHAT_BODY, vendor_options: { api_key: 'sk-in-body-secret', nested: { password: 'hunter2' } } },
    );
    await response.arrayBuffer();
    const [record] = await waitForLogs(gateway, { trace_id: traceId });
    const stored = JSON.stringify(record.request_body);
    expect(stored).not.toContain('sk-in-body-secret');
    expect(stored).not.toContain('hunter2');
    expect(stored).toContain('[REDACTED]');
  });

  // BUG: redact (src/observability/redact.ts) promises to replace secret keys "whatever their depth" but
  // returns any value below depth 32 untouched, so a credential nested 40 levels deep in a body is
  // stored in clear in the log record. Fix: past the depth bound, replace the subtree by a marker
  // (e.g. "[TOO DEEP]") instead of returning it as is.
  it('secrets nested deeper than 32 levels are redacted too', async () => {
    const traceId = uniqueId('redact-deep');
    let nested: Record<string, unknown> = { api_key: 'sk-deeply-nested-secret' };
    for (let i = 0; i < 40; i++) nested = { level: nested };
    const response = await chat({ 'x-gateway-trace-id': traceId }, { ...CHAT_BODY, vendor_options: nested });
    expect(response.status).toBe(200);
    const [record] = await waitForLogs(gateway, { trace_id: traceId });
    expect(JSON.stringify(record.request_body)).not.toContain('sk-deeply-nested-secret');
  });
});

describe('a streamed call', () => {
  it('is recorded with its usage even when the client did not ask for it', async () => {
    const traceId = uniqueId('stream');
    const response = await chat({ 'x-gateway-trace-id': traceId }, { ...CHAT_BODY, stream: true });
    expect(response.headers.get('x-gateway-trace-id')).toBe(traceId);
    const events = sseData(await response.text());
    expect(events.at(-1)).toBe('[DONE]');
    expect(events.some((data) => data !== '[DONE]' && JSON.parse(data).usage)).toBe(false);

    const [record] = await waitForLogs(gateway, { trace_id: traceId });
    expect(record).toMatchObject({ status: 200, stream: true, endpoint: 'chat', model: 'gpt-4o-mini' });
    expect(record.prompt_tokens).toBeGreaterThan(0);
    expect(record.completion_tokens).toBeGreaterThan(0);
    expect(record.total_tokens).toBe(record.prompt_tokens! + record.completion_tokens!);
    expect(record.ttfb_ms).not.toBeNull();
    expect(record.ttfb_ms!).toBeLessThanOrEqual(record.latency_ms);
    expect(JSON.stringify(record.response_body)).toContain('[rec] hello');
  });

  it('through the openai SDK with include_usage: the record has the usage the client saw', async () => {
    const traceId = uniqueId('stream-sdk');
    const client = new OpenAI({
      baseURL: gateway.url,
      apiKey: PROVIDER_KEY,
      maxRetries: 0,
      defaultHeaders: { ...providerHeaders(gateway, fake), 'x-gateway-trace-id': traceId },
    });
    const stream = await client.chat.completions.create({
      ...CHAT_BODY,
      stream: true,
      stream_options: { include_usage: true },
    } as OpenAI.Chat.ChatCompletionCreateParamsStreaming);
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage).toBeDefined();
    const [record] = await waitForLogs(gateway, { trace_id: traceId });
    expect(record.prompt_tokens).toBe(usage!.prompt_tokens);
    expect(record.completion_tokens).toBe(usage!.completion_tokens);
    expect(record.total_tokens).toBe(usage!.total_tokens);
  });
});

describe('errors', () => {
  it('a provider 400 keeps its status, a normalised body, source provider, and is recorded', async () => {
    const traceId = uniqueId('provider-400');
    fake.enqueue({ status: 400 });
    const response = await chat({ 'x-gateway-trace-id': traceId });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-gateway-error-source')).toBe('provider');
    expect(response.headers.get('x-gateway-trace-id')).toBe(traceId);
    const body: unknown = await response.json();
    expectOpenAIError(body);
    expect(body.error.type).toBe('invalid_request_error');

    const [record] = await waitForLogs(gateway, { trace_id: traceId });
    expect(record).toMatchObject({ status: 400, provider: 'openai', error_message: body.error.message });
    expect(record.error_code).toBeTruthy();
    expect(record.response_body).toEqual(body);
  });

  it('a provider text/plain error is normalised to the OpenAI error object', async () => {
    fake.enqueue({ status: 422, body: 'upstream says no' });
    const response = await chat({});
    expect(response.status).toBe(422);
    expect(response.headers.get('x-gateway-error-source')).toBe('provider');
    const body: unknown = await response.json();
    expectOpenAIError(body);
    expect(body.error.message).toContain('upstream says no');
  });

  it.each([
    ['no gateway key', { 'x-gateway-api-key': '' }, 401],
    ['a wrong gateway key', { 'x-gateway-api-key': 'gw-not-a-key' }, 401],
    ['no provider', { 'x-gateway-provider': '', 'x-gateway-custom-host': '' }, 400],
    ['a bad metadata header', { 'x-gateway-metadata': '[1]' }, 400],
  ])("the gateway's own error (%s) carries source gateway", async (_name, headers, status) => {
    const response = await chat(headers);
    expect(response.status).toBe(status);
    expect(response.headers.get('x-gateway-error-source')).toBe('gateway');
    expectOpenAIError(await response.json());
  });

  it('an invalid body is recorded nowhere near the provider, with source gateway', async () => {
    const before = fake.requests.length;
    const response = await chat({}, { model: 'gpt-4o-mini', messages: [] });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-gateway-error-source')).toBe('gateway');
    expect(fake.requests.length).toBe(before);
  });

  it('an unknown log id → 404 from the gateway', async () => {
    const response = await getLog('log_doesnotexist');
    expect(response.status).toBe(404);
    expect(response.headers.get('x-gateway-error-source')).toBe('gateway');
    expectOpenAIError(await response.json());
  });

  it('a bad logs query → 400 from the gateway', async () => {
    const response = await fetch(`${gateway.url}/logs?limit=0`, {
      headers: { 'x-gateway-api-key': gateway.adminKey },
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-gateway-error-source')).toBe('gateway');
    const body: unknown = await response.json();
    expectOpenAIError(body);
    expect(body.error.param).toBe('limit');

    const tooLong = await fetch(`${gateway.url}/logs?search=${'x'.repeat(257)}`, {
      headers: { 'x-gateway-api-key': gateway.adminKey },
    });
    expect(tooLong.status).toBe(400);
    const refused: unknown = await tooLong.json();
    expectOpenAIError(refused);
    expect(refused.error.param).toBe('search');
  });

  it('a logs number not written in digits, or a time range backwards → 400 naming it', async () => {
    for (const [query, param] of [
      ['status=2e2', 'status'],
      ['from_ms=0x10', 'from_ms'],
      ['limit=1.0', 'limit'],
      ['limit=%2010', 'limit'],
      ['from_ms=2000&to_ms=1000', 'from_ms'],
    ] as const) {
      await expectQueryRefused(query, param);
    }
  });

  it('a repeated logs filter → 400 naming it, never a filter left out', async () => {
    for (const [query, param] of [
      ['metadata.team=a&metadata.team=b', 'metadata.team'],
      ['provider=openai&provider=anthropic', 'provider'],
      ['status=200&status=200', 'status'],
    ] as const) {
      await expectQueryRefused(query, param);
    }
  });

  it('more metadata filters, or longer keys or values, than x-gateway-metadata holds → 400 naming them', async () => {
    const filters = (count: number) =>
      Array.from({ length: count }, (_, index) => `metadata.k${index}=v`).join('&');
    await expectQueryRefused(filters(65), 'metadata');
    await expectQueryRefused(`metadata.${'k'.repeat(129)}=v`, `metadata.${'k'.repeat(129)}`);
    await expectQueryRefused(`metadata.team=${'v'.repeat(513)}`, 'metadata.team');
    // At the limits: taken (an emoji is one character, as the header counts it).
    const atLimits = await fetch(
      `${gateway.url}/logs?${filters(63)}&metadata.${'k'.repeat(128)}=${encodeURIComponent('😀'.repeat(512))}`,
      { headers: { 'x-gateway-api-key': gateway.adminKey } },
    );
    expect(atLimits.status).toBe(200);
  });

  /** `GET /v1/logs?<query>` is a 400 from the gateway naming `param`. */
  async function expectQueryRefused(query: string, param: string): Promise<void> {
    const response = await fetch(`${gateway.url}/logs?${query}`, {
      headers: { 'x-gateway-api-key': gateway.adminKey },
    });
    expect(response.status, query).toBe(400);
    const body: unknown = await response.json();
    expectOpenAIError(body);
    expect(body.error.param, query).toBe(param);
  }
});

describe('filters and paging', () => {
  const run = uniqueId('run');
  const sharedTrace = uniqueId('shared');
  let all: LogRecord[];

  beforeAll(async () => {
    const metadata = (i: number) => JSON.stringify({ run, i: String(i) });
    const calls: Array<() => Promise<Response>> = [
      () => chat({ 'x-gateway-metadata': metadata(0), 'x-gateway-trace-id': sharedTrace }),
      () => chat({ 'x-gateway-metadata': metadata(1), 'x-gateway-trace-id': sharedTrace }),
      () => chat({ 'x-gateway-metadata': metadata(2) }, { ...CHAT_BODY, model: 'gpt-4.1-filter' }),
      () => {
        fake.enqueue({ status: 400 });
        return chat({ 'x-gateway-metadata': metadata(3) });
      },
      () =>
        fetch(`${gateway.url}/rerank`, {
          method: 'POST',
          headers: providerHeaders(gateway, fake, {
            'content-type': 'application/json',
            'x-gateway-metadata': metadata(4),
          }),
          body: '{"query":"q"}',
        }),
    ];
    // One after another, so the order of the records is the order of the calls.
    for (const call of calls) {
      const response = await call();
      await response.arrayBuffer();
    }
    all = await waitForLogs(gateway, { 'metadata.run': run }, 5);
  });

  it('metadata.<key> selects one run, newest first', () => {
    expect(all).toHaveLength(5);
    expect(all.map((record) => record.metadata.i)).toEqual(['4', '3', '2', '1', '0']);
    for (let i = 1; i < all.length; i++) {
      expect(all[i - 1].created_at_ms).toBeGreaterThanOrEqual(all[i].created_at_ms);
    }
  });

  it.each([
    [{ trace_id: '' }, ['1', '0']],
    [{ model: 'gpt-4.1-filter' }, ['2']],
    [{ status: '400' }, ['3']],
    [{ provider: 'openai' }, ['4', '3', '2', '1', '0']],
    [{ provider: 'anthropic' }, []],
    [{ 'metadata.i': '3' }, ['3']],
    [{ 'metadata.i': '3', status: '200' }, []],
    // search: inside any metadata key or value, in any case.
    [{ search: run.toUpperCase() }, ['4', '3', '2', '1', '0']],
    [{ search: 'RUN' }, ['4', '3', '2', '1', '0']],
    [{ search: 'nowhere-in-any-metadata' }, []],
  ])('filter %o', async (filter, expected) => {
    const query: Record<string, string> = { 'metadata.run': run, limit: '1000', ...filter };
    if ('trace_id' in filter) query.trace_id = sharedTrace;
    const page = await listLogs(gateway, query);
    const requests = page.data.filter((record) => !record.is_attempt);
    expect(requests.map((record) => record.metadata.i)).toEqual(expected);
    // Attempt records match the same filters as their request.
    for (const record of page.data) expect(expected).toContain(record.metadata.i);
  });

  it('limit and after page through every record once', async () => {
    const everything = await listLogs(gateway, { 'metadata.run': run, limit: '1000' });
    expect(everything.has_more).toBe(false);
    expect(everything.data.length).toBeGreaterThanOrEqual(5);
    const seen: string[] = [];
    let after: string | undefined;
    for (let i = 0; i < 20; i++) {
      const page = await listLogs(gateway, {
        'metadata.run': run,
        limit: '2',
        ...(after ? { after } : {}),
      });
      expect(page.object).toBe('list');
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((record) => record.id));
      if (page.data.length > 0) {
        expect(page.first_id).toBe(page.data[0].id);
        expect(page.last_id).toBe(page.data.at(-1)!.id);
      }
      if (!page.has_more) break;
      after = page.last_id!;
    }
    expect(seen).toEqual(everything.data.map((record) => record.id));
  });

  it('an after id from elsewhere is refused', async () => {
    const response = await fetch(`${gateway.url}/logs?after=log_notarecord`, {
      headers: { 'x-gateway-api-key': gateway.adminKey },
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-gateway-error-source')).toBe('gateway');
  });

  it('the pass-through call of the run is there with its endpoint', () => {
    const passthrough = all.find((record) => record.metadata.i === '4')!;
    expect(passthrough).toMatchObject({ endpoint: 'passthrough', path: '/v1/rerank', method: 'POST' });
  });
});

describe('GATEWAY_LOG_BODIES=false', () => {
  let quiet: TestGateway;
  beforeAll(async () => {
    quiet = await startGateway({ env: { GATEWAY_LOG_BODIES: 'false' } });
  });
  afterAll(async () => {
    await quiet?.close();
  });

  it('stores no request or response bodies, for plain, streamed and pass-through calls', async () => {
    const run = uniqueId('quiet');
    const headers = {
      ...providerHeaders(quiet, fake),
      'content-type': 'application/json',
      'x-gateway-metadata': JSON.stringify({ run }),
    };
    for (const body of [CHAT_BODY, { ...CHAT_BODY, stream: true }]) {
      const response = await fetch(`${quiet.url}/chat/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    fake.enqueue({ status: 400 });
    const failed = await fetch(`${quiet.url}/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify(CHAT_BODY),
    });
    expect(failed.status).toBe(400);
    await failed.arrayBuffer();
    const passthrough = await fetch(`${quiet.url}/rerank`, { method: 'POST', headers, body: '{"q":1}' });
    await passthrough.arrayBuffer();

    const records = await waitForLogs(quiet, { 'metadata.run': run }, 4);
    expect(records).toHaveLength(4);
    for (const record of records) {
      expect(record.request_body).toBeNull();
      expect(record.response_body).toBeNull();
    }
    // Everything else is still there.
    expect(records.filter((record) => record.prompt_tokens !== null)).toHaveLength(2);
    expect(records.map((record) => record.status).sort()).toEqual([200, 200, 200, 400]);
  });
});
