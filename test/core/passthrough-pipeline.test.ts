/**
 * The pass-through runs in the pipeline: the config's retries, fallback and breaker apply to it; bodies
 * stream both ways without a size cap; a JSON answer's model and usage are recorded; and a failed answer
 * never hands a stored credential to a caller who holds only a gateway key.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { logsOf, traceHeaders } from '../routing/support.js';

const STORED_KEY = 'sk-stored-secret-0123456789abcdef';

interface Upstream {
  url: string;
  /** Statuses to answer with, in order; 200 once they run out. */
  script: number[];
  requests: Array<{ path: string; bytes: number; authorization: string | undefined }>;
  close(): Promise<void>;
}

async function readAll(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** An OpenAI-like upstream: 401s echo the key they were given, as OpenAI's do. */
async function startUpstream(): Promise<Upstream> {
  const upstream: Upstream = { url: '', script: [], requests: [], close: async () => {} };
  const server: Server = createServer(async (request, response) => {
    const body = await readAll(request);
    const authorization = request.headers.authorization;
    upstream.requests.push({ path: request.url ?? '', bytes: body.length, authorization });
    const status = upstream.script.shift() ?? 200;
    response.setHeader('content-type', 'application/json');
    if (status === 401) {
      const key = (authorization ?? '').replace(/^Bearer /, '');
      response.writeHead(401).end(
        JSON.stringify({
          error: {
            message: `Incorrect API key provided: ${key}.`,
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        }),
      );
      return;
    }
    if (status !== 200) {
      response.writeHead(status).end(JSON.stringify({ error: { message: `status ${status}` } }));
      return;
    }
    response.writeHead(200).end(
      JSON.stringify({
        object: 'list',
        model: 'rerank-fake-1',
        received_bytes: body.length,
        usage: { prompt_tokens: 7, total_tokens: 7 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  upstream.close = () => new Promise((resolve) => server.close(() => resolve()));
  return upstream;
}

let gateway: TestGateway;
let upstream: Upstream;
let virtualKey: string;

beforeAll(async () => {
  [gateway, upstream] = await Promise.all([
    startGateway({ env: { GATEWAY_BODY_LIMIT_BYTES: '65536' } }),
    startUpstream(),
  ]);
  const { workspace } = gateway.server.bootstrap;
  virtualKey = 'vk-passthrough-secret';
  await gateway.server.deps.store.createCredential({
    workspace_id: workspace.id,
    organisation_id: workspace.organisation_id,
    name: 'stored key',
    provider: 'openai',
    kind: 'virtual_key',
    slug: virtualKey,
    secret: { api_key: STORED_KEY, custom_host: upstream.url },
  });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

function post(path: string, headers: Record<string, string>, body: string | Buffer = '{"query":"q"}') {
  return fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey, ...headers },
    body,
  });
}

describe('pass-through in the pipeline', () => {
  it('never echoes a stored credential in a failed answer', async () => {
    upstream.script.push(401);
    const response = await post('/rerank', { 'x-gateway-virtual-key': virtualKey });
    expect(response.status).toBe(401);
    const text = await response.text();
    expect(text).not.toContain(STORED_KEY);
    expect(text).toContain('Incorrect API key provided');
    // The provider's own body shape is kept: only the secret is cut out.
    expect(JSON.parse(text)).toMatchObject({ error: { code: 'invalid_api_key' } });
  });

  it('retries and falls back as the config says, and records each attempt', async () => {
    const before = upstream.requests.length;
    upstream.script.push(503, 503);
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        { virtual_key: virtualKey, retry: { attempts: 1, on_status_codes: [503] } },
        { virtual_key: virtualKey },
      ],
    };
    const { traceId, headers } = traceHeaders();
    const response = await post('/rerank', { ...headers, 'x-gateway-config': JSON.stringify(config) });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('targets[1]');
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('1');
    expect(upstream.requests.length - before).toBe(3);
    // The body went to every attempt whole.
    expect(upstream.requests.slice(before).map((r) => r.bytes)).toEqual([13, 13, 13]);
    const records = await logsOf(gateway, traceId, 4);
    const call = records.find((r) => !r.is_attempt);
    expect(call).toMatchObject({
      endpoint: 'passthrough',
      status: 200,
      model: 'rerank-fake-1',
      prompt_tokens: 7,
    });
    expect(records.filter((r) => r.is_attempt).map((r) => r.status)).toEqual([503, 503, 200]);
  });

  it('streams a body larger than the body limit to the provider', async () => {
    const big = Buffer.alloc(1 << 20, 'a');
    const body = Buffer.concat([Buffer.from('{"input":"'), big, Buffer.from('"}')]);
    const response = await post('/rerank', { 'x-gateway-virtual-key': virtualKey }, body);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { received_bytes: number }).received_bytes).toBe(body.length);
  });

  it('an open circuit skips a pass-through target for the fallback', async () => {
    upstream.script.push(503);
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        {
          virtual_key: virtualKey,
          cb_config: { failure_threshold: 1, cooldown_interval: 60000 },
        },
        { virtual_key: virtualKey },
      ],
    };
    const headers = { 'x-gateway-config': JSON.stringify(config) };
    expect((await post('/breaker-probe', headers)).status).toBe(200);
    const { traceId, headers: trace } = traceHeaders();
    const before = upstream.requests.length;
    const second = await post('/breaker-probe', { ...headers, ...trace });
    expect(second.status).toBe(200);
    // The first target's circuit is open: only the fallback was called.
    expect(upstream.requests.length - before).toBe(1);
    const records = await logsOf(gateway, traceId, 3);
    expect(records.filter((r) => r.is_attempt).map((r) => r.error_code)).toEqual(['circuit_open', null]);
  });
});
