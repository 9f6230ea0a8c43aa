/**
 * The gateway's life: /health without a key, its own OpenAPI document, and a graceful shutdown that lets
 * an in-flight stream finish, refuses new work, and leaves the call's record in the store.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startSilentProvider, type SilentProvider } from '../helpers/silent-provider.js';
import {
  CHAT_BODY,
  expectOpenAIError,
  parseRawResponses,
  providerHeaders,
  sleep,
  sseData,
  uniqueId,
} from './support.js';

let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'life' });
});
afterAll(async () => {
  await fake?.close();
});

describe('health and the OpenAPI document', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startGateway();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('GET /health answers 200 with no key', async () => {
    const response = await fetch(`${gateway.origin}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('other /v1 endpoints do need a key', async () => {
    const response = await fetch(`${gateway.url}/logs`);
    expect(response.status).toBe(401);
  });

  interface OpenApiDocument {
    openapi: string;
    info: { title: string; version: string };
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: object }> } }>>;
    components?: { schemas?: Record<string, object> };
  }

  let document: OpenApiDocument;

  it('GET /v1/openapi.json is an OpenAPI 3.1 document, with no key', async () => {
    const response = await fetch(`${gateway.url}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    document = (await response.json()) as OpenApiDocument;
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    expect(typeof document.info.title).toBe('string');
    expect(typeof document.info.version).toBe('string');
    expect(document.paths['/v1/chat/completions']?.post).toBeDefined();
    expect(document.paths['/v1/completions']?.post).toBeDefined();
    expect(document.paths['/v1/embeddings']?.post).toBeDefined();
    expect(document.paths['/v1/logs']?.get).toBeDefined();
    expect(document.paths['/v1/logs/{id}']?.get).toBeDefined();
    for (const [path, item] of Object.entries(document.paths)) {
      expect(path.startsWith('/v1/'), path).toBe(true);
      for (const [method, operation] of Object.entries(item)) {
        expect(['get', 'post', 'put', 'patch', 'delete'], `${method} ${path}`).toContain(method);
        expect((operation as { responses?: object }).responses, `${method} ${path}`).toBeDefined();
      }
    }
  });

  it('every request schema compiles with Ajv (JSON Schema 2020-12) and judges bodies', () => {
    expect(document).toBeDefined();
    const compile = (schema: object) => new Ajv2020({ strict: false, allErrors: true }).compile(schema);
    let compiled = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [mediaType, { schema }] of Object.entries(operation.requestBody?.content ?? {})) {
          expect(mediaType).toBe('application/json');
          expect(() => compile(schema), `${method} ${path}`).not.toThrow();
          compiled += 1;
        }
      }
    }
    expect(compiled).toBeGreaterThanOrEqual(3);

    const bodySchema = (path: string) =>
      document.paths[path].post.requestBody!.content['application/json'].schema;
    const chat = compile(bodySchema('/v1/chat/completions'));
    expect(chat(CHAT_BODY)).toBe(true);
    expect(chat({ model: 'gpt-4o-mini', messages: [] })).toBe(false);
    expect(chat({ messages: CHAT_BODY.messages })).toBe(false);
    const completions = compile(bodySchema('/v1/completions'));
    expect(completions({ model: 'gpt-3.5-turbo-instruct', prompt: 'hi' })).toBe(true);
    expect(completions({ model: 'gpt-3.5-turbo-instruct', prompt: 'hi', temperature: 9 })).toBe(false);
    const embeddings = compile(bodySchema('/v1/embeddings'));
    expect(embeddings({ model: 'text-embedding-3-small', input: 'hi' })).toBe(true);
    expect(embeddings({ model: 'text-embedding-3-small' })).toBe(false);
  });

  // BUG: the same TypeBox schema with `$id: 'CreateCredentialBody'` is embedded under both POST
  // /v1/virtual-keys and POST /v1/providers (src/server/routes/management/operations.ts via
  // src/server/openapi.ts), so one 3.1 document holds two schema resources with the same $id; JSON Schema
  // 2020-12 says a URI identifies one schema, and Ajv refuses the document ("reference
  // .../CreateCredentialBody resolves to more than one schema"). Fix: put shared bodies once under
  // components.schemas and point at them with $ref (or drop $id when embedding).
  it('declares the query parameters of the list and delete routes that take them', () => {
    expect(document).toBeDefined();
    const names = (path: string, method: string) =>
      (
        (
          document.paths[path] as Record<string, { parameters?: Array<{ name: string; required?: boolean }> }>
        )[method].parameters ?? []
      ).map((p) => `${p.name}${p.required ? '!' : ''}`);
    expect(names('/v1/logs', 'get')).toEqual(expect.arrayContaining(['trace_id', 'model', 'limit', 'after']));
    expect(names('/v1/policies/rate-limits', 'get')).toEqual(
      expect.arrayContaining(['workspace_id', 'status', 'type', 'unit', 'page_size', 'current_page']),
    );
    expect(names('/v1/cache/semantic/entries', 'delete')).toEqual(
      expect.arrayContaining(['namespace!', 'workspace_id']),
    );
    expect(names('/v1/analytics/timeseries', 'get')).toEqual(
      expect.arrayContaining(['from', 'to', 'interval', 'group_by', 'status_class']),
    );
  });

  it('the whole document loads as one schema resource (no repeated $id)', () => {
    expect(document).toBeDefined();
    const ajv = new Ajv2020({ strict: false });
    expect(() => ajv.addSchema({ ...document, $id: 'https://gateway.local/openapi.json' })).not.toThrow();
  });
});

/** A fresh-connection request (no keep-alive pool), resolving to the status or the connection error. */
function freshRequest(origin: string, path: string): Promise<number | string> {
  return new Promise((resolve) => {
    const request = http.get(`${origin}${path}`, { agent: false, timeout: 3000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    request.on('timeout', () => request.destroy(new Error('timeout')));
  });
}

describe('graceful shutdown', () => {
  const masterKey = randomBytes(32).toString('hex');
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startGateway({
      env: {
        GATEWAY_MASTER_KEY: masterKey,
        GATEWAY_SHUTDOWN_GRACE_MS: '20000',
        // Long enough that only the shutdown flush can have written the record in time.
        GATEWAY_LOG_FLUSH_INTERVAL_MS: '600000',
        GATEWAY_LOG_BATCH_SIZE: '1000',
      },
    });
  });
  afterAll(async () => {
    await gateway?.server.close();
    if (gateway) rmSync(gateway.dataDir, { recursive: true, force: true });
  });

  it('finishes the in-flight stream, refuses new requests, and flushes its record to the store', async () => {
    const traceId = uniqueId('shutdown');
    fake.enqueue({ chunks: 5, chunkDelayMs: 300 });
    const response = await fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      headers: providerHeaders(gateway, fake, {
        'content-type': 'application/json',
        'x-gateway-trace-id': traceId,
      }),
      body: JSON.stringify({
        ...CHAT_BODY,
        messages: [{ role: 'user', content: 'a b c d e' }],
        stream: true,
      }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const first = await reader.read();
    text += decoder.decode(first.value, { stream: true });
    expect(text).toContain('data: ');

    // Shut down while the upstream still has ~1.5 s of chunks to send.
    const closeStarted = Date.now();
    const closing = gateway.server.close();
    let closedAt: number | undefined;
    void closing.then(() => {
      closedAt = Date.now();
    });

    const refused = await freshRequest(gateway.origin, '/health');
    expect(refused === 'ECONNREFUSED' || refused === 'ECONNRESET' || refused === 503, String(refused)).toBe(
      true,
    );
    expect(closedAt).toBeUndefined();

    for (let i = 0; i < 100; i++) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const events = sseData(text);
    expect(events.at(-1)).toBe('[DONE]');
    const content = events
      .slice(0, -1)
      .map((data) => (JSON.parse(data) as { choices: Array<{ delta?: { content?: string } }> }).choices)
      .map((choices) => choices[0]?.delta?.content ?? '')
      .join('');
    expect(content).toBe('[life] a b c d e');

    await Promise.race([
      closing,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error('close() did not resolve in 10 s')), 10_000),
      ),
    ]);
    // The stream did not end the grace period by force: close resolved once the stream was done.
    expect(Date.now() - closeStarted).toBeLessThan(10_000);
    expect(await freshRequest(gateway.origin, '/health')).toBe('ECONNREFUSED');

    // Reopen the store the gateway left behind: the in-flight call's record is there.
    const store = await openStore({ dataDir: gateway.dataDir, masterKey: Buffer.from(masterKey, 'hex') });
    try {
      const page = await store.listLogs({
        workspace_id: gateway.server.bootstrap.workspace.id,
        trace_id: traceId,
        limit: 100,
      });
      const request = page.data.find((record) => !record.is_attempt);
      expect(request, 'record of the in-flight call').toBeDefined();
      expect(request).toMatchObject({ trace_id: traceId, status: 200, stream: true, endpoint: 'chat' });
      expect(request!.completion_tokens).toBeGreaterThan(0);
      expect(JSON.stringify(request!.response_body)).toContain('[life] a b c d e');
    } finally {
      await store.close();
    }
  });
});

describe('shutdown with a client that keeps its connection open', () => {
  let gateway: TestGateway;
  const agent = new http.Agent({ keepAlive: true });

  beforeAll(async () => {
    gateway = await startGateway({ env: { GATEWAY_SHUTDOWN_GRACE_MS: '8000' } });
  });
  afterAll(async () => {
    agent.destroy();
    await gateway?.close();
  });

  // BUG: close() (src/gateway-server.ts) relies on Fastify's forceCloseConnections: 'idle', which closes
  // only the connections idle at the moment close() is called. The connection of an in-flight stream
  // becomes idle (keep-alive) when the stream ends and then stays open until the client drops it or the
  // grace timer (GATEWAY_SHUTDOWN_GRACE_MS, default 30 s) calls closeAllConnections, so the shutdown
  // (and the final log flush behind it) waits out the whole grace period; an orchestrator that kills
  // at 30 s loses the tail of the logs. Fix: while closing, end each connection as its response
  // finishes (Connection: close / closeIdleConnections after each in-flight response).
  it('close() resolves soon after the last in-flight stream ends', async () => {
    fake.enqueue({ chunks: 3, chunkDelayMs: 200 });
    const before = fake.requests.length;
    const { hostname, port } = new URL(gateway.origin);
    const done = new Promise<{ text: string; endedAt: number }>((resolve, reject) => {
      const request = http.request(
        {
          host: hostname,
          port,
          method: 'POST',
          path: '/v1/chat/completions',
          agent,
          headers: providerHeaders(gateway, fake, { 'content-type': 'application/json' }),
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ text, endedAt: Date.now() }));
        },
      );
      request.on('error', reject);
      request.end(JSON.stringify({ ...CHAT_BODY, stream: true }));
    });
    // Wait until the stream is under way before closing.
    for (let i = 0; i < 40 && fake.requests.length === before; i++) await sleep(25);
    await sleep(100);
    const closing = gateway.server.close();
    const { text, endedAt } = await done;
    expect(sseData(text).at(-1)).toBe('[DONE]');
    await closing;
    expect(Date.now() - endedAt).toBeLessThan(2000);
  });
});

describe('a stop cut short by its grace period', () => {
  const masterKey = randomBytes(32).toString('hex');
  const graceMs = 2000;
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startGateway({
      env: {
        GATEWAY_MASTER_KEY: masterKey,
        GATEWAY_SHUTDOWN_GRACE_MS: String(graceMs),
        GATEWAY_BATCH_POLL_MS: '50',
      },
    });
  });
  afterAll(async () => {
    await gateway?.server.close();
    if (gateway) rmSync(gateway.dataDir, { recursive: true, force: true });
  });

  it('ends within one grace period, with a stream and a job still running, and gives the job back', async () => {
    // A stream that would take 20 s, and a background response whose provider never answers.
    fake.enqueue({ chunks: 100, chunkDelayMs: 200 });
    const streaming = await fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      headers: providerHeaders(gateway, fake, { 'content-type': 'application/json' }),
      body: JSON.stringify({ ...CHAT_BODY, stream: true }),
    });
    expect(streaming.status).toBe(200);
    const reader = streaming.body!.getReader();
    await reader.read();
    const created = await fetch(`${gateway.url}/responses`, {
      method: 'POST',
      headers: providerHeaders(gateway, fake, { 'content-type': 'application/json' }),
      body: JSON.stringify({ model: 'fake-hang', input: 'Hang', background: true }),
    });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    const { jobs } = gateway.server.deps.store;
    const hanging = () =>
      fake.requests.some((r) => (r.body as { model?: string } | undefined)?.model === 'fake-hang');
    for (let i = 0; i < 200 && !hanging(); i++) await sleep(25);
    expect(hanging()).toBe(true);
    expect((await jobs.list({ kind: 'response.background', status: 'running' })).data).toHaveLength(1);

    const started = Date.now();
    await gateway.server.close();
    const took = Date.now() - started;
    // One grace period for everything (the requests, the jobs and the final flushes), plus a small margin.
    expect(took).toBeLessThan(graceMs + 750);
    // The stream was cut at the end of it.
    await expect(
      (async () => {
        for (;;) if ((await reader.read()).done) return;
      })(),
    ).rejects.toThrow();

    // The job was given back to the queue, its attempt not counted.
    const store = await openStore({ dataDir: gateway.dataDir, masterKey: Buffer.from(masterKey, 'hex') });
    try {
      const [job] = (await store.jobs.list({ kind: 'response.background' })).data.filter(
        (j) => (j.payload as { response_id?: string }).response_id === id,
      );
      expect(job).toMatchObject({ status: 'queued', attempts: 0 });
    } finally {
      await store.close();
    }
  });
});

describe('a stop while a call that no client or job waits on hangs', () => {
  const graceMs = 2000;
  // The cut is at 1.6 s; the final writes end by 2 s.
  const margin = 750;
  let silent: SilentProvider;

  beforeAll(async () => {
    silent = await startSilentProvider();
  });
  afterAll(async () => {
    await silent?.close();
  });

  async function waitUntilSeen(request: string): Promise<void> {
    expect(await silent.taken(request)).toContain(request);
  }

  /** Stops the gateway; how long it took (a stop that hangs fails the test rather than time it out). */
  async function stopTime(gateway: TestGateway): Promise<number> {
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      gateway.server.close(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('close() hung')), graceMs + 10_000);
      }),
    ]).finally(() => clearTimeout(timer));
    return Date.now() - started;
  }

  /** Answers a chat call whose async after-request check hangs, stops the gateway, and reads back the
   * call's record: the check's result in it. */
  async function stopWithHangingCheck(
    check: Record<string, unknown>,
    setUp: (gateway: TestGateway) => Promise<void>,
    hangingRequest: string,
  ): Promise<{ tookMs: number; check: unknown }> {
    const masterKey = randomBytes(32).toString('hex');
    const gateway = await startGateway({
      env: { GATEWAY_MASTER_KEY: masterKey, GATEWAY_SHUTDOWN_GRACE_MS: String(graceMs) },
    });
    try {
      await setUp(gateway);
      const traceId = uniqueId('stop-check');
      const config = {
        provider: 'openai',
        api_key: 'sk-stop-check',
        custom_host: fake.url,
        after_request_hooks: [{ id: 'audit', async: true, checks: [check] }],
      };
      const response = await fetch(`${gateway.url}/chat/completions`, {
        method: 'POST',
        headers: {
          'x-gateway-api-key': gateway.adminKey,
          'x-gateway-trace-id': traceId,
          'x-gateway-config': JSON.stringify(config),
          'content-type': 'application/json',
        },
        body: JSON.stringify(CHAT_BODY),
      });
      expect(response.status).toBe(200);
      await response.text();
      await waitUntilSeen(hangingRequest);

      const tookMs = await stopTime(gateway);

      const store = await openStore({ dataDir: gateway.dataDir, masterKey: Buffer.from(masterKey, 'hex') });
      try {
        const page = await store.listLogs({
          workspace_id: gateway.server.bootstrap.workspace.id,
          trace_id: traceId,
          limit: 10,
        });
        const record = page.data.find((r) => !r.is_attempt && r.endpoint === 'chat' && r.status === 200);
        expect(record, 'record of the call').toBeDefined();
        const [hook] = (record!.hook_results as { after_request_hooks: Array<{ checks: unknown[] }> })
          .after_request_hooks;
        expect(hook).toMatchObject({ id: 'audit', async: true });
        return { tookMs, check: hook.checks[0] };
      } finally {
        await store.close();
      }
    } finally {
      rmSync(gateway.dataDir, { recursive: true, force: true });
    }
  }

  /** `stopWithHangingCheck` of a model judge whose stored config `slug` (and `more`) calls the silent provider. */
  function stopWithHangingJudge(slug: string, more: Record<string, unknown> = {}) {
    return stopWithHangingCheck(
      { id: 'default.modelJudge', parameters: { config: slug, instructions: 'Be polite.', timeout: 60_000 } },
      async (gateway) => {
        const created = await fetch(`${gateway.url}/configs`, {
          method: 'POST',
          headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json' },
          body: JSON.stringify({
            slug,
            config: { provider: 'openai', api_key: 'sk-silent', custom_host: silent.url, ...more },
          }),
        });
        expect(created.status).toBe(200);
      },
      'POST /chat/completions',
    );
  }

  /** A judge's check that the stop ended, in its call's record. */
  const JUDGE_ERRED_ON_STOP = {
    id: 'default.modelJudge',
    error: { message: expect.stringContaining('the gateway stopped') as unknown, timed_out: false },
  };

  it('ends an async hook’s webhook at the cut, and records the call with the check erred', async () => {
    const { tookMs, check } = await stopWithHangingCheck(
      { id: 'default.webhook', parameters: { webhookURL: `${silent.url}/audit`, timeout: 60_000 } },
      async () => {},
      'POST /audit',
    );
    expect(tookMs).toBeLessThan(graceMs + margin);
    // The check failed on the stop, counted as its on_error says, rather than hold the stop.
    expect(check).toMatchObject({
      id: 'default.webhook',
      verdict: true,
      error: { message: 'the gateway stopped while the check was running', timed_out: false },
    });
  });

  it('ends an async hook’s judge call at the cut, and records the call with the check erred', async () => {
    const { tookMs, check } = await stopWithHangingJudge('silent-judge');
    expect(tookMs).toBeLessThan(graceMs + margin);
    expect(check).toMatchObject(JUDGE_ERRED_ON_STOP);
  });

  it('records a judge call whose config retries, without a retry once its connection was destroyed', async () => {
    // Retried, the judge's call would back off (seconds, in all) and go out again to a client that no
    // longer sends: the judged call's record, and the judge's own, would come after the final writes.
    const { tookMs, check } = await stopWithHangingJudge('retrying-judge', { retry: { attempts: 5 } });
    expect(tookMs).toBeLessThan(graceMs + margin);
    expect(check).toMatchObject(JUDGE_ERRED_ON_STOP);
  });

  it('ends a provider file download whose provider never answers', async () => {
    const gateway = await startGateway({ env: { GATEWAY_SHUTDOWN_GRACE_MS: String(graceMs) } });
    try {
      const downloading = fetch(`${gateway.url}/files/file-stop/content`, {
        headers: providerHeaders(gateway, silent.url, { 'x-gateway-files': 'provider' }),
      }).then(
        (response) => response.status,
        (err: Error) => err.message,
      );
      await waitUntilSeen('GET /files/file-stop/content');
      expect(await stopTime(gateway)).toBeLessThan(graceMs + margin);
      // The client's connection was closed at the cut.
      expect(await downloading).toBe('fetch failed');
    } finally {
      rmSync(gateway.dataDir, { recursive: true, force: true });
    }
  });
});

describe('a request that reaches a stopping node', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startGateway({ env: { GATEWAY_SHUTDOWN_GRACE_MS: '5000' } });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('is refused with 503 shutting_down in the OpenAI shape, Connection: close and Retry-After', async () => {
    // A call in flight keeps its connection open through the stop; a second request follows it there.
    fake.enqueue({ delayMs: 800 });
    const before = fake.requests.length;
    const { hostname, port } = new URL(gateway.origin);
    const socket = net.connect(Number(port), hostname);
    const parts: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => parts.push(chunk));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const headers = Object.entries(providerHeaders(gateway, fake, { 'content-type': 'application/json' }))
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    const body = JSON.stringify(CHAT_BODY);
    const request = `POST /v1/chat/completions HTTP/1.1\r\nhost: ${hostname}\r\n${headers}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    socket.write(request);
    for (let i = 0; i < 100 && fake.requests.length === before; i++) await sleep(10);
    const closing = gateway.server.close();
    await sleep(100);
    // The refusal carries the trace id the client sent, and the request id its SDK reads.
    socket.write(request.replace('\r\n\r\n', '\r\nx-gateway-trace-id: trace-stopping\r\n\r\n'));
    await Promise.race([ended, sleep(5000)]);
    socket.destroy();
    await closing;

    const [first, second] = parseRawResponses(Buffer.concat(parts));
    expect(first?.status).toBe(200);
    expect(second?.status).toBe(503);
    expect(second!.headers.connection).toBe('close');
    expect(second!.headers['retry-after']).toBe('1');
    expect(second!.headers['x-gateway-error-source']).toBe('gateway');
    expect(second!.headers['cache-control']).toBe('no-store');
    expect(second!.headers['x-gateway-trace-id']).toBe('trace-stopping');
    expect(second!.headers['x-request-id']).toBe('trace-stopping');
    const error = JSON.parse(second!.body) as unknown;
    expectOpenAIError(error);
    expect(error.error.code).toBe('shutting_down');
    expect(fake.requests.length).toBe(before + 1);
  });
});
