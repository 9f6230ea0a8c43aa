/**
 * The pass-through's edges: a path never leaves the provider's base URL, what is forwarded and relayed
 * is the end-to-end part of a request and its answer only, and a failed answer comes back readable.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  expectOpenAIError,
  parseRawResponses,
  rawExchange,
  sleep,
  uniqueId,
  waitForLogs,
} from './support.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

interface RecordingUpstream {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

type Answer = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

/** An OpenAI-style upstream that notes each request as it came and answers with `answer` (JSON echo by default). */
async function startRecordingUpstream(answer?: Answer): Promise<RecordingUpstream> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (answer) return answer(req, res, body);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'echo', url: req.url }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let gateway: TestGateway;
let upstream: RecordingUpstream;

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  gateway = await startGateway();
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

/** A config whose provider lives under a path of a shared host (one tenant's prefix). */
function tenantConfig(host: string): string {
  return JSON.stringify({ provider: 'openai', api_key: 'sk-tenant-a', custom_host: `${host}/tenant-a/v1` });
}

function rawGet(path: string, host: string): string {
  return (
    `GET ${path} HTTP/1.1\r\nhost: gateway\r\nx-gateway-api-key: ${gateway.adminKey}\r\n` +
    `x-gateway-config: ${tenantConfig(host)}\r\nconnection: close\r\n\r\n`
  );
}

describe('the path stays under the provider base URL', () => {
  it.each([
    '/v1/../../tenant-b/v1/files',
    '/v1/%2e%2e/%2E%2E/tenant-b/v1/files',
    '/v1/vector_stores/.%2e/.%2e/.%2e/tenant-b/v1/files',
    '/v1/vector_stores/%2e/../../../admin',
  ])('%s is refused before it reaches any provider', async (path) => {
    const before = upstream.seen.length;
    const exchange = await rawExchange(gateway.origin, rawGet(path, upstream.url));
    const [response] = exchange.responses;
    expect(response.status).toBe(400);
    const body = JSON.parse(response.body) as unknown;
    expectOpenAIError(body);
    expect(body.error.code).toBe('invalid_path');
    expect(upstream.seen.length).toBe(before);
  });

  it('dots inside a segment, encoded slashes and double slashes go as they came', async () => {
    for (const path of ['/v1/vector_stores/a..b/.hidden', '/v1/vector_stores/a%2Fb', '/v1//vector_stores']) {
      const exchange = await rawExchange(gateway.origin, rawGet(path, upstream.url));
      expect(exchange.responses[0].status).toBe(200);
      expect(upstream.seen.at(-1)?.url).toBe(`/tenant-a${path}`);
    }
  });
});

describe('what is forwarded', () => {
  it("a client's provider key in another provider's header never reaches a target with a key of its own", async () => {
    for (const header of ['x-api-key', 'api-key', 'x-goog-api-key']) {
      const response = await fetch(`${gateway.url}/vector_stores`, {
        headers: {
          'x-gateway-api-key': gateway.adminKey,
          'x-gateway-config': tenantConfig(upstream.url),
          [header]: 'sk-ant-client-secret',
        },
      });
      expect(response.status, header).toBe(200);
      const seen = upstream.seen.at(-1);
      expect(seen?.headers[header], header).toBeUndefined();
      expect(JSON.stringify(seen?.headers), header).not.toContain('sk-ant-client-secret');
      expect(seen?.headers.authorization, header).toBe('Bearer sk-tenant-a');
    }
  });

  it("a client's x-api-key is the key of a target that has none, sent in the target's own header", async () => {
    const response = await fetch(`${gateway.url}/models`, {
      headers: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': `${upstream.url}/v1`,
        'x-api-key': 'sk-client-own',
      },
    });
    expect(response.status).toBe(200);
    const seen = upstream.seen.at(-1);
    expect(seen?.headers.authorization).toBe('Bearer sk-client-own');
    expect(seen?.headers['x-api-key']).toBeUndefined();
  });

  describe("Gemini's `?key=` (its REST form of x-goog-api-key)", () => {
    const clientKey = 'AIza-client-own-key';
    const generate = (headers: Record<string, string>, query: string) =>
      fetch(`${gateway.url}/models/gemini-2.0-flash:generateContent?${query}`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
      });

    it('is taken out of the query: a target with a key of its own sends that key, the rest of the query goes as it came', async () => {
      const config = { provider: 'google', api_key: 'k-stored-gemini', custom_host: upstream.url };
      const response = await generate(
        { 'x-gateway-config': JSON.stringify(config) },
        `alt=sse&key=${clientKey}&x=a%20b&key=second`,
      );
      expect(response.status).toBe(200);
      const seen = upstream.seen.at(-1)!;
      expect(seen.url).toBe('/v1beta/models/gemini-2.0-flash:generateContent?alt=sse&x=a%20b');
      expect(seen.headers['x-goog-api-key']).toBe('k-stored-gemini');
      expect(JSON.stringify(seen)).not.toContain(clientKey);
    });

    it('is the key of a target that has none, sent in its header', async () => {
      const response = await generate(
        { 'x-gateway-provider': 'google', 'x-gateway-custom-host': upstream.url },
        `key=${encodeURIComponent(clientKey)}`,
      );
      expect(response.status).toBe(200);
      const seen = upstream.seen.at(-1)!;
      expect(seen.url).toBe('/v1beta/models/gemini-2.0-flash:generateContent');
      expect(seen.headers['x-goog-api-key']).toBe(clientKey);
    });

    it('never reaches the target a fallback hands over to', async () => {
      const failing = await startRecordingUpstream((_req, res) => {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"overloaded"}}');
      });
      try {
        const config = {
          strategy: { mode: 'fallback' },
          targets: [
            { provider: 'google', custom_host: failing.url },
            { provider: 'openai', api_key: 'sk-fallback', custom_host: upstream.url },
          ],
        };
        const response = await generate({ 'x-gateway-config': JSON.stringify(config) }, `key=${clientKey}`);
        expect(response.status).toBe(200);
        // The first target, which has no key of its own, had the client's in its header, not its query.
        expect(failing.seen[0].url).toBe('/v1beta/models/gemini-2.0-flash:generateContent');
        expect(failing.seen[0].headers['x-goog-api-key']).toBe(clientKey);
        const seen = upstream.seen.at(-1)!;
        expect(seen.url).toBe('/models/gemini-2.0-flash:generateContent');
        expect(seen.headers.authorization).toBe('Bearer sk-fallback');
        expect(JSON.stringify(seen)).not.toContain(clientKey);
      } finally {
        await failing.close();
      }
    });

    it('yields to a key the client sent in a header', async () => {
      const response = await generate(
        {
          'x-gateway-provider': 'google',
          'x-gateway-custom-host': upstream.url,
          'x-goog-api-key': 'AIza-from-header',
        },
        `key=${clientKey}`,
      );
      expect(response.status).toBe(200);
      const seen = upstream.seen.at(-1)!;
      expect(seen.headers['x-goog-api-key']).toBe('AIza-from-header');
      expect(JSON.stringify(seen)).not.toContain(clientKey);
    });

    it('is refused with 400 naming it when it cannot be a key', async () => {
      const before = upstream.seen.length;
      const response = await generate(
        { 'x-gateway-provider': 'google', 'x-gateway-custom-host': upstream.url },
        'key=AIza%0D%0Ax-injected:%201',
      );
      expect(response.status).toBe(400);
      const body = (await response.json()) as unknown;
      expectOpenAIError(body);
      expect(body.error).toMatchObject({ code: 'invalid_query', param: 'key' });
      expect(upstream.seen.length).toBe(before);
    });
  });

  it('an upload sent with Expect: 100-continue (as curl sends a large one) reaches the provider', async () => {
    const body = JSON.stringify({ input: 'x'.repeat(2048) });
    const head =
      `POST /v1/uploads HTTP/1.1\r\nhost: gateway\r\nx-gateway-api-key: ${gateway.adminKey}\r\n` +
      `x-gateway-config: ${tenantConfig(upstream.url)}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nexpect: 100-continue\r\nconnection: close\r\n\r\n`;
    const exchange = await rawExchange(gateway.origin, head + body);
    const text = exchange.received.toString('latin1');
    expect(text.startsWith('HTTP/1.1 100 Continue\r\n\r\n')).toBe(true);
    const [response] = parseAfterContinue(text);
    expect(response.status).toBe(200);
    const seen = upstream.seen.at(-1)!;
    expect(seen.url).toBe('/tenant-a/v1/uploads');
    expect(seen.body.toString()).toBe(body);
    expect(seen.headers.expect).toBeUndefined();
  });
});

describe('GET and HEAD', () => {
  it.each([
    ['a length', (body: string) => `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`],
    [
      'chunks',
      (body: string) =>
        `transfer-encoding: chunked\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    ],
  ])(
    'a GET with a body (in %s) reaches the provider with it, as any pass-through body',
    async (_, framed) => {
      const body = JSON.stringify({ query: { match: 'a GET that searches' } });
      const exchange = await rawExchange(
        gateway.origin,
        `GET /v1/vector_stores/vs_1/search?limit=2 HTTP/1.1\r\nhost: gateway\r\n` +
          `x-gateway-api-key: ${gateway.adminKey}\r\nx-gateway-config: ${tenantConfig(upstream.url)}\r\n` +
          `content-type: application/json\r\nconnection: close\r\n${framed(body)}`,
      );
      expect(exchange.responses[0]?.status).toBe(200);
      const seen = upstream.seen.at(-1)!;
      expect(seen.method).toBe('GET');
      expect(seen.url).toBe('/tenant-a/v1/vector_stores/vs_1/search?limit=2');
      expect(seen.body.toString()).toBe(body);
    },
  );

  it("a HEAD reaches the provider as a HEAD; its answer's headers come back, its length included, with no body", async () => {
    const body = JSON.stringify({ id: 'vs_1', object: 'vector_store' });
    const heading = await startRecordingUpstream((req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        etag: '"f1"',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    });
    try {
      const exchange = await rawExchange(
        gateway.origin,
        `HEAD /v1/vector_stores/vs_1 HTTP/1.1\r\nhost: gateway\r\nx-gateway-api-key: ${gateway.adminKey}\r\n` +
          `x-gateway-config: ${tenantConfig(heading.url)}\r\nconnection: close\r\n\r\n`,
      );
      const text = exchange.received.toString('latin1');
      const [head, rest] = text.split('\r\n\r\n');
      expect(head.startsWith('HTTP/1.1 200')).toBe(true);
      expect(head.toLowerCase()).toContain(`content-length: ${Buffer.byteLength(body)}`);
      expect(head.toLowerCase()).toContain('etag: "f1"');
      expect(head.toLowerCase()).not.toContain('transfer-encoding');
      expect(rest).toBe('');
      expect(heading.seen.at(-1)?.method).toBe('HEAD');
    } finally {
      await heading.close();
    }
  });

  it('a GET without a body reaches the provider without one', async () => {
    const exchange = await rawExchange(gateway.origin, rawGet('/v1/vector_stores?limit=1', upstream.url));
    expect(exchange.responses[0]?.status).toBe(200);
    const seen = upstream.seen.at(-1)!;
    expect(seen.body.length).toBe(0);
    expect(seen.headers['content-length']).toBeUndefined();
    expect(seen.headers['transfer-encoding']).toBeUndefined();
  });
});

describe('a redirect or a not-modified answer', () => {
  it.each([
    [302, { location: 'https://files.example.com/signed/abc' }],
    [304, { etag: '"v1"' }],
  ] as const)(
    '%i is the answer, relayed and recorded without an error, not a failure to fall back from',
    async (status, headers) => {
      const answering = await startRecordingUpstream((_req, res) => {
        res.writeHead(status, headers);
        res.end();
      });
      try {
        const traceId = uniqueId('pt-3xx');
        const before = upstream.seen.length;
        const config = {
          strategy: { mode: 'fallback' },
          targets: [
            { provider: 'openai', api_key: 'sk-a', custom_host: `${answering.url}/v1` },
            { provider: 'openai', api_key: 'sk-b', custom_host: `${upstream.url}/v1` },
          ],
        };
        const response = await fetch(`${gateway.url}/vector_stores/vs_1/content`, {
          redirect: 'manual',
          headers: {
            'x-gateway-api-key': gateway.adminKey,
            'x-gateway-config': JSON.stringify(config),
            'x-gateway-trace-id': traceId,
            'if-none-match': '"v1"',
          },
        });
        expect(response.status).toBe(status);
        for (const [name, value] of Object.entries(headers)) expect(response.headers.get(name)).toBe(value);
        expect(response.headers.get('x-gateway-last-used-option-index')).toBe('targets[0]');
        expect(upstream.seen.length).toBe(before);
        const [record] = await waitForLogs(gateway, { trace_id: traceId });
        expect(record.status).toBe(status);
        expect(record.error_code).toBeNull();
      } finally {
        await answering.close();
      }
    },
  );
});

describe("the answer's headers", () => {
  it.each([
    [400, 'application/json'],
    [404, 'text/html'],
    [302, 'text/plain'],
  ])(
    "a %s answer read to cut credentials out keeps the provider's Content-Type (%s)",
    async (status, type) => {
      const answering = await startRecordingUpstream((_req, res) => {
        res.writeHead(status, { 'content-type': type, ...(status === 302 && { location: '/elsewhere' }) });
        res.end(type === 'application/json' ? '{"error":{"message":"no"}}' : 'no such thing');
      });
      try {
        const response = await fetch(`${gateway.url}/vector_stores`, {
          redirect: 'manual',
          headers: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': tenantConfig(answering.url) },
        });
        expect(response.status).toBe(status);
        expect(response.headers.get('content-type')).toBe(type);
      } finally {
        await answering.close();
      }
    },
  );

  it("the provider's policies for its own origin (Alt-Svc, Strict-Transport-Security) are not the gateway's", async () => {
    const answering = await startRecordingUpstream((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'alt-svc': 'h3=":443"; ma=86400',
        'strict-transport-security': 'max-age=31536000; includeSubDomains; preload',
        'openai-processing-ms': '12',
      });
      res.end('{"object":"list","data":[]}');
    });
    try {
      const response = await fetch(`${gateway.url}/vector_stores`, {
        headers: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': tenantConfig(answering.url) },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('alt-svc')).toBeNull();
      expect(response.headers.get('strict-transport-security')).toBeNull();
      expect(response.headers.get('openai-processing-ms')).toBe('12');
    } finally {
      await answering.close();
    }
  });

  it.each([200, 401])(
    'Set-Cookie headers come back one by one, as the provider set them (%s)',
    async (status) => {
      const cookies = [
        'AWSALB=abc; Expires=Fri, 04 Dec 2026 16:00:00 GMT; Path=/',
        'AWSALBCORS=abc; Expires=Fri, 04 Dec 2026 16:00:00 GMT; Path=/; SameSite=None; Secure',
      ];
      const setting = await startRecordingUpstream((_req, res) => {
        res.setHeader('set-cookie', cookies);
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(status === 200 ? { object: 'list', data: [] } : { error: { message: 'no' } }));
      });
      try {
        const response = await fetch(`${gateway.url}/vector_stores`, {
          headers: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': tenantConfig(setting.url) },
        });
        expect(response.status).toBe(status);
        expect(response.headers.getSetCookie()).toEqual(cookies);
      } finally {
        await setting.close();
      }
    },
  );
});

describe('PATCH', () => {
  it("goes to the provider with its body, as POST and PUT do (Gemini's cachedContents.patch)", async () => {
    const body = JSON.stringify({ ttl: '600s' });
    const config = { provider: 'google', api_key: 'k-gemini', custom_host: upstream.url };
    const response = await fetch(`${gateway.url}/cachedContents/c-1?updateMask=ttl`, {
      method: 'PATCH',
      headers: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify(config),
        'content-type': 'application/json',
      },
      body,
    });
    expect(response.status).toBe(200);
    const seen = upstream.seen.at(-1)!;
    expect(seen.method).toBe('PATCH');
    expect(seen.url).toBe('/v1beta/cachedContents/c-1?updateMask=ttl');
    expect(seen.body.toString()).toBe(body);
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers['x-goog-api-key']).toBe('k-gemini');
  });

  it('sends its body, streamed in chunks, again to the target a fallback hands over to', async () => {
    const failing = await startRecordingUpstream((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"overloaded"}}');
    });
    try {
      const config = {
        strategy: { mode: 'fallback' },
        targets: [
          { provider: 'openai', api_key: 'sk-first', custom_host: failing.url },
          { provider: 'openai', api_key: 'sk-second', custom_host: upstream.url },
        ],
      };
      const body = JSON.stringify({ name: 'renamed', padding: 'p'.repeat(100_000) });
      const exchange = await rawExchange(
        gateway.origin,
        `PATCH /v1/fine_tuning/jobs/ftjob-1 HTTP/1.1\r\nhost: gateway\r\nx-gateway-api-key: ${gateway.adminKey}\r\n` +
          `x-gateway-config: ${JSON.stringify(config)}\r\ncontent-type: application/json\r\n` +
          `transfer-encoding: chunked\r\nconnection: close\r\n\r\n` +
          `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      );
      expect(exchange.responses[0].status).toBe(200);
      expect(failing.seen[0].method).toBe('PATCH');
      expect(failing.seen[0].body.toString()).toBe(body);
      const seen = upstream.seen.at(-1)!;
      expect(seen.method).toBe('PATCH');
      expect(seen.url).toBe('/fine_tuning/jobs/ftjob-1');
      expect(seen.body.toString()).toBe(body);
      expect(seen.headers.authorization).toBe('Bearer sk-second');
    } finally {
      await failing.close();
    }
  });
});

describe('an upload keeps the length the client gave it', () => {
  it.each([
    ['openai', {}],
    ['anthropic', {}],
    [
      'azure-openai',
      { cloudd_resource_name: 'r', cloudd_deployment_id: 'd', cloudd_api_version: '2024-10-21' },
    ],
    ['azure-ai', { cloudd_api_version: '2024-05-01-preview' }],
    ['cohere', {}],
    ['google', {}],
  ])('%s', async (provider, extra) => {
    const config = { provider, api_key: 'k-upload', custom_host: upstream.url, ...extra };
    const bytes = Buffer.alloc(300_000, 'z');
    const response = await fetch(`${gateway.url}/uploads/up_1/parts`, {
      method: 'POST',
      headers: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify(config),
        'content-type': 'application/octet-stream',
      },
      body: bytes,
    });
    expect(response.status).toBe(200);
    const seen = upstream.seen.at(-1)!;
    expect(seen.url).toContain('/uploads/up_1/parts');
    expect(seen.body.length).toBe(bytes.length);
    expect(seen.headers['content-length']).toBe(String(bytes.length));
    expect(seen.headers['transfer-encoding']).toBeUndefined();
  });
});

describe('hop-by-hop headers named in Connection', () => {
  it('stay behind in both directions', async () => {
    const hopping = await startRecordingUpstream((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        connection: 'keep-alive, x-upstream-hop',
        'x-upstream-hop': 'between-provider-and-gateway',
        'x-end-to-end': 'kept',
      });
      res.end('{"ok":true}');
    });
    try {
      const config = JSON.stringify({
        provider: 'openai',
        api_key: 'sk-hop',
        custom_host: `${hopping.url}/v1`,
      });
      const exchange = await rawExchange(
        gateway.origin,
        `GET /v1/vector_stores HTTP/1.1\r\nhost: gateway\r\nx-gateway-api-key: ${gateway.adminKey}\r\n` +
          `x-gateway-config: ${config}\r\nconnection: close, X-Client-Hop\r\nx-client-hop: between-client-and-gateway\r\n` +
          `x-client-end-to-end: kept\r\n\r\n`,
      );
      const head = exchange.received.toString('latin1').split('\r\n\r\n')[0].toLowerCase();
      expect(head.startsWith('http/1.1 200')).toBe(true);
      expect(head).not.toContain('x-upstream-hop');
      expect(head).toContain('x-end-to-end: kept');
      const seen = hopping.seen.at(-1)!;
      expect(seen.headers['x-client-hop']).toBeUndefined();
      expect(seen.headers['x-client-end-to-end']).toBe('kept');
    } finally {
      await hopping.close();
    }
  });
});

describe('an answer that does not reach its end', () => {
  let breaking: RecordingUpstream;
  let closedAt: number | undefined;

  beforeAll(async () => {
    breaking = await startRecordingUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"i":0}\n\n');
      if (req.url?.includes('stalls')) {
        res.on('close', () => (closedAt = Date.now()));
        return;
      }
      if (req.url?.includes('breaks')) {
        setTimeout(() => res.socket?.destroy(), 100);
        return;
      }
      let i = 1;
      const timer = setInterval(() => res.write(`data: {"i":${i++}}\n\n`), 50);
      res.on('close', () => {
        clearInterval(timer);
        closedAt = Date.now();
      });
    });
  });
  afterAll(() => breaking?.close());

  function stream(
    path: string,
    traceId: string,
    signal?: AbortSignal,
    more: Record<string, unknown> = {},
  ): Promise<Response> {
    const config = { provider: 'openai', api_key: 'sk-sse', custom_host: `${breaking.url}/v1`, ...more };
    return fetch(`${gateway.url}${path}`, {
      headers: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify(config),
        'x-gateway-trace-id': traceId,
      },
      signal,
    });
  }

  it('cut by the provider is recorded as the provider failing, not as the client leaving', async () => {
    const traceId = uniqueId('pt-provider-cut');
    const response = await stream('/stream/breaks', traceId);
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    const [record] = await waitForLogs(gateway, { trace_id: traceId });
    expect(record.status).toBe(502);
    expect(record.error_code).toBe('upstream_unreachable');
  });

  it('gone silent for longer than request_timeout is ended, not held open', async () => {
    const traceId = uniqueId('pt-stalled');
    closedAt = undefined;
    const started = Date.now();
    const response = await stream('/stream/stalls', traceId, undefined, { request_timeout: 300 });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('data: {"i":0}');
    const rest = await Promise.race([
      reader.read().then(
        () => 'ended',
        () => 'cut',
      ),
      sleep(3000).then(() => 'held'),
    ]);
    expect(rest).toBe('cut');
    expect(Date.now() - started).toBeLessThan(2000);
    const [record] = await waitForLogs(gateway, { trace_id: traceId });
    expect(record.status).toBe(408);
    expect(record.error_code).toBe('request_timeout');
    for (let i = 0; i < 40 && closedAt === undefined; i++) await sleep(25);
    expect(closedAt).toBeDefined();
  });

  it('flows on under a request_timeout longer than a timer holds (2^31 ms and more)', async () => {
    const traceId = uniqueId('pt-long-timeout');
    const abort = new AbortController();
    const response = await stream('/stream/flows', traceId, abort.signal, { request_timeout: 3_000_000_000 });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let text = '';
    // Several chunks 50 ms apart: a deadline read as 1 ms would have cut the stream after the first.
    while (!text.includes('data: {"i":4}')) {
      const { value, done } = await reader.read();
      expect(done).toBe(false);
      text += new TextDecoder().decode(value);
    }
    abort.abort();
    await reader.cancel().catch(() => undefined);
  });

  it('a failed answer whose body stalls ends within request_timeout', async () => {
    const stalling = await startRecordingUpstream((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.write('{"error":{"message":"half an err');
    });
    try {
      const traceId = uniqueId('pt-stalled-error');
      const started = Date.now();
      const config = {
        provider: 'openai',
        api_key: 'sk-err',
        custom_host: `${stalling.url}/v1`,
        request_timeout: 300,
      };
      const response = await Promise.race([
        fetch(`${gateway.url}/vector_stores`, {
          headers: {
            'x-gateway-api-key': gateway.adminKey,
            'x-gateway-config': JSON.stringify(config),
            'x-gateway-trace-id': traceId,
          },
        }),
        sleep(3000).then(() => undefined),
      ]);
      expect(response?.status).toBe(408);
      expect(Date.now() - started).toBeLessThan(2000);
      const body = (await response!.json()) as unknown;
      expectOpenAIError(body);
      expect(body.error.code).toBe('request_timeout');
    } finally {
      await stalling.close();
    }
  });

  it('a failed answer too large to be read for credentials is not held whole: 502 upstream_invalid_response, the provider closed', async () => {
    let closed = false;
    const flooding = await startRecordingUpstream((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(1 << 20, 'e');
      let sent = 0;
      const more = () => {
        // 64 MiB at most, as fast as the gateway reads it.
        while (sent < 64) {
          sent += 1;
          if (!res.write(chunk)) break;
        }
        if (sent >= 64) res.end();
        else res.once('drain', more);
      };
      res.on('close', () => (closed = !res.writableFinished));
      more();
    });
    try {
      const traceId = uniqueId('pt-huge-error');
      const response = await fetch(`${gateway.url}/vector_stores`, {
        headers: {
          'x-gateway-api-key': gateway.adminKey,
          'x-gateway-config': JSON.stringify({
            provider: 'openai',
            api_key: 'sk-err',
            custom_host: `${flooding.url}/v1`,
          }),
          'x-gateway-trace-id': traceId,
        },
      });
      expect(response.status).toBe(502);
      const body = (await response.json()) as unknown;
      expectOpenAIError(body);
      expect(body.error.code).toBe('upstream_invalid_response');
      expect(body.error.message).toMatch(/^openai answered with a failure larger than 16777216 bytes/);
      for (let i = 0; i < 40 && !closed; i++) await sleep(25);
      expect(closed).toBe(true);
    } finally {
      await flooding.close();
    }
  });

  it('left by the client is recorded as 499 and the provider connection is closed', async () => {
    const traceId = uniqueId('pt-client-left');
    const leaving = new AbortController();
    const response = await stream('/stream/long', traceId, leaving.signal);
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('data: {"i":0}');
    closedAt = undefined;
    leaving.abort();
    const left = Date.now();
    const [record] = await waitForLogs(gateway, { trace_id: traceId });
    expect(record.status).toBe(499);
    for (let i = 0; i < 40 && closedAt === undefined; i++) await sleep(25);
    expect(closedAt! - left).toBeLessThan(1000);
  });
});

function parseAfterContinue(text: string): ReturnType<typeof parseRawResponses> {
  return parseRawResponses(Buffer.from(text.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, ''), 'latin1'));
}

describe('a failed answer', () => {
  it.each([
    ['gzip', gzipSync],
    ['br', brotliCompressSync],
  ] as const)(
    'sent %s-compressed is relayed readable, with the stored key cut out',
    async (encoding, compress) => {
      const key = 'sk-compressed-error-key-123456';
      const errorBody = {
        error: {
          message: `Incorrect API key provided: ${key}.`,
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      };
      const compressing = await startRecordingUpstream((_req, res) => {
        const bytes = compress(Buffer.from(JSON.stringify(errorBody)));
        res.writeHead(401, {
          'content-type': 'application/json',
          'content-encoding': encoding,
          'content-length': bytes.length,
        });
        res.end(bytes);
      });
      try {
        const response = await fetch(`${gateway.url}/vector_stores`, {
          headers: {
            'x-gateway-api-key': gateway.adminKey,
            'x-gateway-config': JSON.stringify({
              provider: 'openai',
              api_key: key,
              custom_host: `${compressing.url}/v1`,
            }),
          },
        });
        expect(response.status).toBe(401);
        const text = await response.text();
        expect(text).not.toContain(key);
        const body = JSON.parse(text) as typeof errorBody;
        expect(body.error.message).toBe('Incorrect API key provided: [REDACTED].');
        expect(body.error.code).toBe('invalid_api_key');
      } finally {
        await compressing.close();
      }
    },
  );
});

describe('a failed answer at the bound of what is read of it (16 MiB)', () => {
  const BOUND = 16 << 20;

  /** A provider failing with `bytes` of text, without a Content-Length; held open after them with `open`. */
  async function failing(bytes: number, open: boolean) {
    let closedEarly = false;
    const upstream = await startRecordingUpstream((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(1 << 20, 'e');
      for (let sent = 0; sent < bytes; sent += chunk.length) {
        res.write(chunk.subarray(0, Math.min(chunk.length, bytes - sent)));
      }
      res.on('close', () => (closedEarly = !res.writableEnded));
      if (!open) res.end();
    });
    return { upstream, closedEarly: () => closedEarly };
  }

  const call = (host: string) =>
    fetch(`${gateway.url}/vector_stores`, {
      headers: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify({
          provider: 'openai',
          api_key: 'sk-err',
          custom_host: `${host}/v1`,
        }),
      },
    });

  it('of exactly the bound is relayed whole', async () => {
    const { upstream } = await failing(BOUND, false);
    try {
      const response = await call(upstream.url);
      expect(response.status).toBe(500);
      expect((await response.arrayBuffer()).byteLength).toBe(BOUND);
    } finally {
      await upstream.close();
    }
  });

  it('one byte past the bound fails with 502 at once and the provider connection is closed', async () => {
    const { upstream, closedEarly } = await failing(BOUND + 1, true);
    try {
      const response = await Promise.race([call(upstream.url), sleep(5000).then(() => undefined)]);
      expect(response?.status).toBe(502);
      const body = (await response!.json()) as unknown;
      expectOpenAIError(body);
      expect(body.error.code).toBe('upstream_invalid_response');
      expect(body.error.message).toMatch(`larger than ${BOUND} bytes`);
      for (let i = 0; i < 40 && !closedEarly(); i++) await sleep(25);
      expect(closedEarly()).toBe(true);
    } finally {
      await upstream.close();
    }
  });

  it.each([
    ['exactly the bound is relayed whole', BOUND, 500],
    ['one byte more fails with 502', BOUND + 1, 502],
  ] as const)('gzip-compressed, decompressing to %s', async (_case, decompressed, status) => {
    const compressing = await startRecordingUpstream((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(gzipSync(Buffer.alloc(decompressed, 'e')));
    });
    try {
      const response = await call(compressing.url);
      expect(response.status).toBe(status);
      if (status === 500) {
        expect((await response.arrayBuffer()).byteLength).toBe(BOUND);
        return;
      }
      const body = (await response.json()) as unknown;
      expectOpenAIError(body);
      expect(body.error.code).toBe('upstream_invalid_response');
      expect(body.error.message).toMatch(`larger than ${BOUND} bytes (or decompressing to more)`);
    } finally {
      await compressing.close();
    }
  });
});

describe('a body too large to be kept for a second send', () => {
  const LIMIT = 65536;
  let small: TestGateway;
  let busy: RecordingUpstream;

  beforeAll(async () => {
    small = await startGateway({ env: { GATEWAY_BODY_LIMIT_BYTES: String(LIMIT) } });
    busy = await startRecordingUpstream((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json', 'x-busy': 'yes' });
      res.end(JSON.stringify({ error: { message: 'The server is overloaded', type: 'server_error' } }));
    });
  });
  afterAll(async () => {
    await small?.close();
    await busy?.close();
  });

  function send(config: Record<string, unknown>): Promise<Response> {
    return fetch(`${small.url}/uploads/up_1/parts`, {
      method: 'POST',
      headers: {
        'x-gateway-api-key': small.adminKey,
        'x-gateway-config': JSON.stringify(config),
        'content-type': 'application/octet-stream',
      },
      body: Buffer.alloc(LIMIT * 3, 'a'),
    });
  }

  it('is not retried: the provider failure stands', async () => {
    const before = busy.seen.length;
    const response = await send({
      provider: 'openai',
      api_key: 'sk-busy',
      custom_host: `${busy.url}/v1`,
      retry: { attempts: 2, on_status_codes: [503] },
    });
    expect(response.status).toBe(503);
    expect(response.headers.get('x-busy')).toBe('yes');
    expect(await response.json()).toEqual({
      error: { message: 'The server is overloaded', type: 'server_error' },
    });
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('0');
    expect(busy.seen.length - before).toBe(1);
    expect(busy.seen.at(-1)!.body.length).toBe(LIMIT * 3);
  });

  it('does not fall back: the provider failure stands', async () => {
    const before = { busy: busy.seen.length, other: upstream.seen.length };
    const response = await send({
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'openai', api_key: 'sk-busy', custom_host: `${busy.url}/v1` },
        { provider: 'openai', api_key: 'sk-other', custom_host: `${upstream.url}/v1` },
      ],
    });
    expect(response.status).toBe(503);
    expect(response.headers.get('x-busy')).toBe('yes');
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('targets[0]');
    expect(busy.seen.length - before.busy).toBe(1);
    expect(upstream.seen.length - before.other).toBe(0);
  });
});
