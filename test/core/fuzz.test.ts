/**
 * Hostile input at the HTTP boundary: malformed JSON, wrong types at every known body key, deep nesting,
 * prototype keys, wrong content types, oversized bodies and headers, lying Content-Length and aborted
 * uploads. Every answer must be a 4xx (never a 5xx), in the OpenAI error shape when it has a body, and
 * the gateway must still answer /health and a normal chat completion afterwards.
 */
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ChatCompletionRequestSchema,
  CompletionRequestSchema,
  EmbeddingRequestSchema,
} from '../../src/core/schemas/index.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  CHAT_BODY,
  expectOpenAIError,
  postRaw,
  providerHeaders,
  rawExchange,
  type ErrorBody,
} from './support.js';

const BODY_LIMIT = 65_536;

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'fuzz' });
  gateway = await startGateway({ env: { GATEWAY_BODY_LIMIT_BYTES: String(BODY_LIMIT) } });
});
afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

function jsonHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return providerHeaders(gateway, fake, { 'content-type': 'application/json', ...extra });
}

/** A gateway error: status in 400-499, the OpenAI error shape, marked as the gateway's own. */
function expectGateway4xx(
  result: { status: number; headers: Headers; text: string },
  status?: number,
): ErrorBody {
  expect(result.status, result.text).toBeGreaterThanOrEqual(400);
  expect(result.status, result.text).toBeLessThan(500);
  if (status !== undefined) expect(result.status, result.text).toBe(status);
  const body: unknown = JSON.parse(result.text);
  expectOpenAIError(body);
  expect(result.headers.get('x-gateway-error-source')).toBe('gateway');
  return body;
}

async function expectStillServing(): Promise<void> {
  const health = await fetch(`${gateway.origin}/health`);
  expect(health.status).toBe(200);
  const response = await postRaw(`${gateway.url}/chat/completions`, JSON.stringify(CHAT_BODY), jsonHeaders());
  expect(response.status, response.text).toBe(200);
  expect(
    (JSON.parse(response.text) as { choices: Array<{ message: { content: string } }> }).choices[0].message
      .content,
  ).toBe('[fuzz] hello');
}

const VALID = JSON.stringify(CHAT_BODY).slice(1, -1);

describe('malformed JSON bodies', () => {
  const cases: Array<[string, string | Buffer, number, string]> = [
    ['truncated', '{"model":"gpt-4o-mini","messages":[{"role":"user"', 400, 'invalid_json'],
    ['trailing garbage', `{${VALID}}garbage`, 400, 'invalid_json'],
    ['two objects', `{${VALID}}{${VALID}}`, 400, 'invalid_json'],
    [
      'invalid UTF-8 bytes in place of JSON',
      Buffer.from([0x7b, 0xff, 0xfe, 0xfd, 0x7d]),
      400,
      'invalid_json',
    ],
    ['NaN', `{${VALID},"temperature":NaN}`, 400, 'invalid_json'],
    ['Infinity', `{${VALID},"temperature":Infinity}`, 400, 'invalid_json'],
    ['single quotes', "{'model':'gpt-4o-mini'}", 400, 'invalid_json'],
    ['comment', `{${VALID} /* hi */}`, 400, 'invalid_json'],
    ['trailing comma', `{${VALID},}`, 400, 'invalid_json'],
    // No body at all, as without Content-Type (the openai SDKs send the header on operations that take none).
    ['empty body', '', 400, 'invalid_body'],
    ['whitespace only', '   \n ', 400, 'invalid_json'],
    ['a JSON string', '"hello"', 400, 'invalid_body'],
    ['a JSON number', '42', 400, 'invalid_body'],
    ['a JSON array', `[{${VALID}}]`, 400, 'invalid_body'],
    ['JSON null', 'null', 400, 'invalid_body'],
    ['JSON true', 'true', 400, 'invalid_body'],
    ['__proto__ key', `{${VALID},"__proto__":{"polluted":"yes"}}`, 400, 'invalid_json'],
    [
      'nested __proto__ key',
      `{"model":"m","messages":[{"role":"user","content":"x","__proto__":{"polluted":"yes"}}]}`,
      400,
      'invalid_json',
    ],
    [
      'constructor.prototype key',
      `{${VALID},"constructor":{"prototype":{"polluted":"yes"}}}`,
      400,
      'invalid_json',
    ],
  ];

  it.each(cases)('%s → %i %s', async (_name, body, status, code) => {
    const before = fake.requests.length;
    const result = await postRaw(`${gateway.url}/chat/completions`, body, jsonHeaders());
    const error = expectGateway4xx(result, status);
    expect(error.error.code).toBe(code);
    expect(fake.requests.length).toBe(before);
  });

  it('invalid UTF-8 inside a string is never a 5xx', async () => {
    // Decoded with replacement characters, the body is a valid request; what matters is no crash.
    const body = Buffer.concat([
      Buffer.from('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"a'),
      Buffer.from([0xc3, 0x28, 0xff, 0xed, 0xa0, 0x80]),
      Buffer.from('"}]}'),
    ]);
    const result = await postRaw(`${gateway.url}/chat/completions`, body, jsonHeaders());
    expect(result.status, result.text).toBeLessThan(500);
  });

  it('no prototype was polluted and the gateway still serves', async () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
    await expectStillServing();
  });
});

// ---------------------------------------------------------------------------------------------------
// Wrong types at every known key: the table of keys comes from each endpoint's own schema, and an
// independent checker (Ajv over the same JSON Schema) says whether each junk value is acceptable. A
// value it rejects must be a gateway 400 naming that key; a value it accepts must not be a 5xx.

const JUNK: unknown[] = [null, true, -1.5, 'junk', [], { junk: { deeper: [1] } }, [[null]]];

interface KeyTable {
  path: string;
  schema: object;
  base: Record<string, unknown>;
  /** Dotted keys inside the body (a number is an array index). */
  keys: string[];
}

const messageKeys = ['messages.0.role', 'messages.0.content', 'messages.0.name'];
const tables: KeyTable[] = [
  {
    path: '/chat/completions',
    schema: ChatCompletionRequestSchema,
    base: CHAT_BODY,
    keys: [...Object.keys(ChatCompletionRequestSchema.properties), ...messageKeys],
  },
  {
    path: '/completions',
    schema: CompletionRequestSchema,
    base: { model: 'gpt-3.5-turbo-instruct', prompt: 'hello' },
    keys: Object.keys(CompletionRequestSchema.properties),
  },
  {
    path: '/embeddings',
    schema: EmbeddingRequestSchema,
    base: { model: 'text-embedding-3-small', input: 'hello' },
    keys: Object.keys(EmbeddingRequestSchema.properties),
  },
];

function withValueAt(base: Record<string, unknown>, dotted: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(base);
  const parts = dotted.split('.');
  let node: Record<string, unknown> = copy;
  for (const part of parts.slice(0, -1)) node = node[part] as Record<string, unknown>;
  node[parts.at(-1)!] = value;
  return copy;
}

/** `messages.0.role` → `messages[0].role`, the way the gateway names fields. */
function paramName(dotted: string): string {
  return dotted.replace(/\.(\d+)/g, '[$1]');
}

describe.each(tables)('POST $path: junk at every known key', (table) => {
  const ajv = new Ajv({ strict: false });
  const check = ajv.compile(JSON.parse(JSON.stringify(table.schema)) as object);

  it('the table covers the endpoint keys', () => {
    expect(table.keys.length).toBeGreaterThanOrEqual(5);
    expect(table.keys).toContain('model');
  });

  it.each(table.keys)('%s', async (key) => {
    const problems: string[] = [];
    await Promise.all(
      JUNK.map(async (junk) => {
        const body = withValueAt(table.base, key, junk);
        const acceptable = check(body);
        const result = await postRaw(`${gateway.url}${table.path}`, JSON.stringify(body), jsonHeaders());
        const label = `${key}=${JSON.stringify(junk)} → ${result.status} ${result.text.slice(0, 160)}`;
        if (result.status >= 500) {
          problems.push(`5xx: ${label}`);
          return;
        }
        if (result.status === 200) {
          if (!acceptable) problems.push(`accepted a value the schema rejects: ${label}`);
          return;
        }
        let body400: unknown;
        try {
          body400 = JSON.parse(result.text);
          expectOpenAIError(body400);
        } catch {
          problems.push(`not an OpenAI error body: ${label}`);
          return;
        }
        const source = result.headers.get('x-gateway-error-source');
        if (result.status !== 400 || source !== 'gateway') {
          if (!acceptable) problems.push(`expected a gateway 400: ${label} (source ${source})`);
          return;
        }
        const param = (body400 as ErrorBody).error.param ?? '';
        const expected = paramName(key);
        // A cross-field rule may name its partner (stream_options needs stream, top_logprobs logprobs).
        if (!param.startsWith(expected) && acceptable) return;
        if (!param.startsWith(expected)) problems.push(`param ${param} does not name ${expected}: ${label}`);
      }),
    );
    expect(problems).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------

describe('deep nesting', () => {
  const depth = 10_000;
  const deepArray = `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const deepObject = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

  it('10,000 levels at a known key → 400 naming it', async () => {
    const result = await postRaw(
      `${gateway.url}/chat/completions`,
      `{"model":"gpt-4o-mini","messages":${deepArray}}`,
      jsonHeaders(),
    );
    const error = expectGateway4xx(result, 400);
    expect(error.error.param).toMatch(/^messages/);
  });

  it('10,000 levels inside a message → 400', async () => {
    const result = await postRaw(
      `${gateway.url}/chat/completions`,
      `{"model":"gpt-4o-mini","messages":[{"role":"user","content":${deepArray}}]}`,
      jsonHeaders(),
    );
    expectGateway4xx(result, 400);
  });

  // BUG: unknown top-level keys are passed through to the provider, so a deeply nested value passes
  // validation, and then every JSON.stringify of the body overflows the stack: toOpenAIBody
  // (src/providers/openai/openai-body.ts) while building the upstream request, which runAttempt
  // (src/gateway/attempt.ts) files as a connection failure (502 upstream_unreachable "Maximum call stack
  // size exceeded"), and bodyForLog (src/gateway/log-record.ts, after redact stops at depth 32) in
  // the model call's log record, which escapes as 500 internal_error and loses the log record. Either 5xx is
  // seen, depending on which overflows first. Fix: bound the nesting depth of request bodies at the
  // boundary (400 invalid_body), and make bodyForLog summarise a body it cannot serialise.
  it.each([
    ['array', deepArray],
    ['object', deepObject],
  ])('10,000 levels of %s at an unknown key → 4xx, not 502', async (_kind, deep) => {
    const result = await postRaw(
      `${gateway.url}/chat/completions`,
      `{${VALID},"vendor_extra":${deep}}`,
      jsonHeaders(),
    );
    expectGateway4xx(result, 400);
  });

  it('a deeply nested x-gateway-config → 400 naming the header', async () => {
    const levels = 1000;
    const config = `${'{"targets":['.repeat(levels)}{}${']}'.repeat(levels)}`;
    const result = await postRaw(
      `${gateway.url}/chat/completions`,
      JSON.stringify(CHAT_BODY),
      jsonHeaders({ 'x-gateway-config': config }),
    );
    const error = expectGateway4xx(result, 400);
    expect(error.error.param ?? '').toMatch(/^(x-gateway-)?config/);
  });

  it('the gateway still serves', async () => {
    await expectStillServing();
  });
});

describe('content type', () => {
  it('a JSON body with no content-type → 415', async () => {
    const body = JSON.stringify(CHAT_BODY);
    const headers = providerHeaders(gateway, fake);
    const request =
      `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\n` +
      Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
    const exchange = await rawExchange(gateway.origin, request);
    expect(exchange.responses).toHaveLength(1);
    const [response] = exchange.responses;
    expect(response.status).toBe(415);
    expectOpenAIError(JSON.parse(response.body));
    expect(response.headers['x-gateway-error-source']).toBe('gateway');
  });

  it.each([
    'application/x-www-form-urlencoded',
    'application/xml',
    'multipart/form-data; boundary=x',
    'image/png',
  ])('content-type %s → 415', async (contentType) => {
    const result = await postRaw(
      `${gateway.url}/chat/completions`,
      JSON.stringify(CHAT_BODY),
      jsonHeaders({ 'content-type': contentType }),
    );
    const error = expectGateway4xx(result, 415);
    expect(error.error.code).toBe('unsupported_media_type');
  });

  // BUG: the model routes keep Fastify's default text/plain parser, so a JSON body sent as text/plain
  // is parsed as a string and rejected with 400 invalid_body "The request body must be a JSON object"
  // instead of 415 unsupported_media_type (which the error handler maps for every other wrong type).
  // Fix: removeContentTypeParser('text/plain') in the scope of the model routes (src/server/app.ts or
  // src/server/routes/model.ts).
  it.each(['text/plain', 'text/plain;charset=UTF-8'])('content-type %s → 415', async (contentType) => {
    const result = await postRaw(
      `${gateway.url}/chat/completions`,
      JSON.stringify(CHAT_BODY),
      jsonHeaders({ 'content-type': contentType }),
    );
    expectGateway4xx(result, 415);
  });

  it('text/plain is never a 5xx and never reaches the provider', async () => {
    const before = fake.requests.length;
    const result = await postRaw(
      `${gateway.url}/chat/completions`,
      JSON.stringify(CHAT_BODY),
      jsonHeaders({ 'content-type': 'text/plain' }),
    );
    expectGateway4xx(result);
    expect(fake.requests.length).toBe(before);
  });
});

describe('sizes', () => {
  const oneMegabyte = JSON.stringify({ ...CHAT_BODY, padding: 'x'.repeat(1024 * 1024) });

  it('a 1 MB body above GATEWAY_BODY_LIMIT_BYTES → 413', async () => {
    const before = fake.requests.length;
    const result = await postRaw(`${gateway.url}/chat/completions`, oneMegabyte, jsonHeaders());
    const error = expectGateway4xx(result, 413);
    expect(error.error.code).toBe('payload_too_large');
    expect(fake.requests.length).toBe(before);
  });

  it('a 1 MB chunked body (no Content-Length) → 413', async () => {
    const head =
      `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\n` +
      Object.entries(jsonHeaders())
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      `Transfer-Encoding: chunked\r\n\r\n`;
    const payload = Buffer.from(oneMegabyte);
    const chunks: Buffer[] = [Buffer.from(head)];
    for (let offset = 0; offset < payload.length; offset += 16_384) {
      const piece = payload.subarray(offset, offset + 16_384);
      chunks.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
    }
    chunks.push(Buffer.from('0\r\n\r\n'));
    const exchange = await rawExchange(gateway.origin, Buffer.concat(chunks), { waitMs: 3000 });
    expect(exchange.responses.length).toBeGreaterThanOrEqual(1);
    const [response] = exchange.responses;
    expect(response.status).toBe(413);
    expectOpenAIError(JSON.parse(response.body));
  });

  it('a 1 MB pass-through body, past the model body limit, streams whole to the provider', async () => {
    // The pass-through has no size cap: its body is the provider's own and is streamed, not parsed.
    const body = Buffer.alloc(1024 * 1024, 7);
    const result = await postRaw(
      `${gateway.url}/raw/upload`,
      body,
      providerHeaders(gateway, fake, { 'content-type': 'application/octet-stream' }),
    );
    expect(result.status).toBe(200);
    const echo = JSON.parse(result.text) as { body_base64: string };
    expect(Buffer.from(echo.body_base64, 'base64').equals(body)).toBe(true);
  });

  it('a body just under the limit is accepted', async () => {
    const padding = 'y'.repeat(BODY_LIMIT - 200);
    const result = await postRaw(
      `${gateway.url}/chat/completions`,
      JSON.stringify({ ...CHAT_BODY, padding }),
      jsonHeaders(),
    );
    expect(result.status, result.text.slice(0, 200)).toBe(200);
  });

  it('a 20 KB header → 431 with no 5xx', async () => {
    const result = await postRaw(
      `${gateway.url}/chat/completions`,
      JSON.stringify(CHAT_BODY),
      jsonHeaders({ 'x-large': 'h'.repeat(20_000) }),
    );
    expect(result.status).toBe(431);
  });

  it('500 small extra headers are fine', async () => {
    const extra: Record<string, string> = {};
    for (let i = 0; i < 500; i++) extra[`x-extra-${i}`] = String(i);
    const result = await postRaw(
      `${gateway.url}/chat/completions`,
      JSON.stringify(CHAT_BODY),
      jsonHeaders(extra),
    );
    expect(result.status).toBe(200);
  });

  it('a 12 KB x-gateway-config that is not JSON → 400 naming the header', async () => {
    const result = await postRaw(
      `${gateway.url}/chat/completions`,
      JSON.stringify(CHAT_BODY),
      jsonHeaders({ 'x-gateway-config': `{${'"k":['.repeat(2400)}` }),
    );
    const error = expectGateway4xx(result, 400);
    expect(error.error.param).toBe('x-gateway-config');
  });

  it('a 12 KB x-gateway-config of many unknown keys → 400', async () => {
    const config: Record<string, unknown> = { provider: 'openai', api_key: 'sk', custom_host: fake.url };
    for (let i = 0; i < 800; i++) config[`k${i}`] = i;
    const result = await postRaw(
      `${gateway.url}/chat/completions`,
      JSON.stringify(CHAT_BODY),
      jsonHeaders({ 'x-gateway-config': JSON.stringify(config) }),
    );
    expectGateway4xx(result, 400);
  });

  it('a 12 KB valid x-gateway-config (long name) is used', async () => {
    const config = { name: 'n'.repeat(12_000), provider: 'openai', api_key: 'sk-cfg', custom_host: fake.url };
    const result = await postRaw(
      `${gateway.url}/chat/completions`,
      JSON.stringify(CHAT_BODY),
      jsonHeaders({ 'x-gateway-config': JSON.stringify(config) }),
    );
    expect(result.status, result.text.slice(0, 300)).toBe(200);
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-cfg');
  });

  it('a 20 KB x-gateway-config → 431', async () => {
    const config = { name: 'n'.repeat(20_000), provider: 'openai', api_key: 'sk', custom_host: fake.url };
    const result = await postRaw(
      `${gateway.url}/chat/completions`,
      JSON.stringify(CHAT_BODY),
      jsonHeaders({ 'x-gateway-config': JSON.stringify(config) }),
    );
    expect(result.status).toBe(431);
  });

  it('the gateway still serves', async () => {
    await expectStillServing();
  });
});

describe('malformed HTTP on a raw socket', () => {
  const body = JSON.stringify(CHAT_BODY);
  function head(contentLength: number | string): string {
    return (
      `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\n` +
      Object.entries(jsonHeaders())
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      `Content-Length: ${contentLength}\r\n\r\n`
    );
  }

  // Built lazily: the gateway starts after the tests are collected.
  const cases: Array<[string, () => string, { end?: boolean; destroyAfterMs?: number; waitMs?: number }]> = [
    ['Content-Length shorter than the body', () => head(10) + body, { waitMs: 2000 }],
    [
      'Content-Length longer than the body, then half-close',
      () => head(body.length + 50) + body,
      { end: true },
    ],
    ['Content-Length not a number', () => head('ten'), { waitMs: 2000 }],
    ['two Content-Length values', () => head(`${body.length}, ${body.length + 1}`) + body, { waitMs: 2000 }],
    ['not HTTP at all', () => 'HELLO GATEWAY\r\n\r\n', { waitMs: 2000 }],
    ['a header line without a colon', () => 'GET /health HTTP/1.1\r\nHost gateway\r\n\r\n', { waitMs: 2000 }],
    [
      'a space inside a header name',
      () => 'GET /health HTTP/1.1\r\nHo st: gateway\r\n\r\n',
      { waitMs: 2000 },
    ],
  ];

  it.each(cases)('%s → only 4xx answers', async (_name, data, options) => {
    const before = fake.requests.length;
    const exchange = await rawExchange(gateway.origin, data(), options);
    expect(exchange.received.length).toBeGreaterThan(0);
    expect(exchange.responses.length).toBeGreaterThanOrEqual(1);
    for (const response of exchange.responses) {
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
    }
    expect(fake.requests.length).toBe(before);
  });

  // BUG: errors raised by Node's HTTP parser (malformed request, lying Content-Length, headers above
  // 16 KB) are answered by Fastify's default clientErrorHandler with
  // {"error":"Bad Request","message":"Client Error","statusCode":400}, not the OpenAI error object every
  // other gateway error uses. Fix: pass a `clientErrorHandler` to Fastify() in src/server/app.ts that
  // writes the OpenAI error body (e.g. code invalid_request / request_header_fields_too_large).
  it('answers of the HTTP parser are in the OpenAI error shape', async () => {
    const exchange = await rawExchange(gateway.origin, 'HELLO GATEWAY\r\n\r\n', { waitMs: 2000 });
    expect(exchange.responses).toHaveLength(1);
    expectOpenAIError(JSON.parse(exchange.responses[0].body));
  });

  it('a 431 for huge headers is in the OpenAI error shape', async () => {
    const result = await postRaw(
      `${gateway.url}/chat/completions`,
      JSON.stringify(CHAT_BODY),
      jsonHeaders({ 'x-large': 'h'.repeat(20_000) }),
    );
    expect(result.status).toBe(431);
    expectOpenAIError(JSON.parse(result.text));
  });

  it('a body that stops mid-way gets no answer and does not reach the provider', async () => {
    const before = fake.requests.length;
    const exchange = await rawExchange(gateway.origin, head(body.length + 100) + body, { waitMs: 800 });
    expect(exchange.closedByServer).toBe(false);
    expect(exchange.received.length).toBe(0);
    expect(fake.requests.length).toBe(before);
  });

  it('a request aborted mid-body does not reach the provider', async () => {
    const before = fake.requests.length;
    const exchange = await rawExchange(gateway.origin, head(body.length) + body.slice(0, 20), {
      destroyAfterMs: 100,
    });
    expect(exchange.received.length).toBe(0);
    expect(fake.requests.length).toBe(before);
  });

  it('twenty aborted uploads in a row leave the gateway serving', async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        rawExchange(gateway.origin, head(body.length) + body.slice(0, i + 1), { destroyAfterMs: 20 + i }),
      ),
    );
    await expectStillServing();
  });
});
