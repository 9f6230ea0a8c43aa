/**
 * Helpers shared by the core behaviour tests: provider-selection headers, the OpenAI error shape,
 * raw HTTP over a socket (for requests `fetch` refuses to send), bounded polling of the log records,
 * server-sent event parsing, and a small observable SSE upstream.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { FakeUpstream } from '../fakes/openai/server.js';
import type { TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import type { LogRecord } from '../../src/store/types.js';

export const PROVIDER_KEY = 'sk-provider-core-tests';

/** Headers that send a call to `upstreamUrl` (a base URL ending in /v1) as the OpenAI provider. */
export function providerHeaders(
  gateway: TestGateway,
  upstream: FakeUpstream | string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    'x-gateway-api-key': gateway.adminKey,
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': typeof upstream === 'string' ? upstream : upstream.url,
    authorization: `Bearer ${PROVIDER_KEY}`,
    ...extra,
  };
}

export const CHAT_BODY = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] };

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** The body is the OpenAI error object: `{"error":{"message","type","param","code"}}`; a 409 refusing a
 * change for what depends on it has `dependents` beside (test/management/dependents-field.test.ts). */
export function expectOpenAIError(body: unknown): asserts body is ErrorBody {
  expectOpenAPIValid('ErrorResponse', body);
  const error = (body as ErrorBody).error;
  const dependents = error.code === 'conflict' && 'dependents' in error ? ['dependents'] : [];
  expect(Object.keys(error).sort()).toEqual(['code', ...dependents, 'message', 'param', 'type']);
  expect(typeof error.message).toBe('string');
  expect(error.message.length).toBeGreaterThan(0);
  expect(typeof error.type).toBe('string');
  expect(error.param === null || typeof error.param === 'string').toBe(true);
  expect(error.code === null || typeof error.code === 'string').toBe(true);
}

/** POSTs raw bytes (or text) with the given headers and returns status, headers and the body text. */
export async function postRaw(
  url: string,
  body: string | Buffer | undefined,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(url, { method: 'POST', headers, body });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Splits what came back on a raw socket into HTTP responses (Content-Length framed). */
export function parseRawResponses(bytes: Buffer): RawResponse[] {
  const out: RawResponse[] = [];
  let rest = bytes.toString('latin1');
  for (let i = 0; i < 10 && rest.startsWith('HTTP/1.'); i++) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd === -1) break;
    const [statusLine, ...lines] = rest.slice(0, headEnd).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const bodyStart = headEnd + 4;
    out.push({
      status: Number(statusLine.split(' ')[1]),
      headers,
      body: Buffer.from(rest.slice(bodyStart, bodyStart + length), 'latin1').toString('utf8'),
    });
    rest = rest.slice(bodyStart + length);
  }
  return out;
}

export interface RawExchange {
  /** Everything the server sent. */
  received: Buffer;
  responses: RawResponse[];
  /** The server closed the connection (rather than the test giving up waiting). */
  closedByServer: boolean;
}

/**
 * Writes bytes on a fresh TCP connection, then either half-closes (`end`), destroys the socket after
 * `destroyAfterMs`, or just waits; gives up after `waitMs` in any case.
 */
export function rawExchange(
  origin: string,
  data: string | Buffer,
  options: { end?: boolean; destroyAfterMs?: number; waitMs?: number } = {},
): Promise<RawExchange> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    const parts: Buffer[] = [];
    let closedByServer = false;
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(giveUp);
      const received = Buffer.concat(parts);
      resolve({ received, responses: parseRawResponses(received), closedByServer });
    };
    socket.on('data', (chunk: Buffer) => parts.push(chunk));
    socket.on('end', () => {
      closedByServer = true;
    });
    socket.on('error', () => undefined);
    socket.on('close', settle);
    socket.write(data);
    if (options.end) socket.end();
    if (options.destroyAfterMs !== undefined) setTimeout(() => socket.destroy(), options.destroyAfterMs);
    const giveUp = setTimeout(() => {
      socket.destroy();
      settle();
    }, options.waitMs ?? 3000);
  });
}

export interface LogPage {
  object: string;
  data: LogRecord[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

export async function listLogs(gateway: TestGateway, query: Record<string, string> = {}): Promise<LogPage> {
  const response = await fetch(`${gateway.url}/logs?${new URLSearchParams(query).toString()}`, {
    headers: { 'x-gateway-api-key': gateway.adminKey },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as LogPage;
}

/** POSTs JSON to the gateway as its admin, under `traceId` (to find its records), with `headers` added. */
export function postTraced(
  gateway: TestGateway,
  path: string,
  traceId: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<Response> {
  return fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {
      'x-gateway-api-key': gateway.adminKey,
      'content-type': 'application/json',
      'x-gateway-trace-id': traceId,
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
/**
 * Polls `GET /v1/logs` (records are written in the background) until `count` records of requests match
 * (attempt records, `is_attempt: true`, are left out unless `withAttempts`); bounded in time and tries.
 */
export async function waitForLogs(
  gateway: TestGateway,
  query: Record<string, string>,
  count = 1,
  options: { withAttempts?: boolean; timeoutMs?: number } = {},
): Promise<LogRecord[]> {
  const deadline = Date.now() + (options.timeoutMs ?? 5000);
  const select = (page: LogPage) =>
    options.withAttempts ? page.data : page.data.filter((record) => !record.is_attempt);
  const fullQuery = { limit: '1000', ...query };
  let records = select(await listLogs(gateway, fullQuery));
  for (let i = 0; i < 200 && records.length < count && Date.now() < deadline; i++) {
    await sleep(25);
    records = select(await listLogs(gateway, fullQuery));
  }
  expect(records.length, `log records for ${JSON.stringify(query)}`).toBeGreaterThanOrEqual(count);
  return records;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The `data:` payloads of a server-sent event stream, in order. */
export function sseData(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n'),
    )
    .filter((data) => data.length > 0);
}

/** A unique value per call, for trace ids and metadata tags that pick one test's records out. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

export interface ObservedUpstream {
  /** Base URL ending in /v1. */
  url: string;
  /** When each request's connection closed (Date.now()), by arrival order. */
  closedAt: Array<number | undefined>;
  /** Chunks written to each request before it ended or closed. */
  written: number[];
  close(): Promise<void>;
}

/**
 * An OpenAI-style upstream that streams `chunks` chat chunks `gapMs` apart on POST /v1/chat/completions
 * and `chunks` plain-text lines on any other path, and notes when each connection closes, so a test
 * can see the gateway hang up on it.
 */
export async function startObservedUpstream(chunks = 50, gapMs = 100): Promise<ObservedUpstream> {
  const closedAt: Array<number | undefined> = [];
  const written: number[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const index = closedAt.length;
    closedAt.push(undefined);
    written.push(0);
    res.on('close', () => {
      closedAt[index] = Date.now();
    });
    req.resume();
    req.on('end', () => {
      const isChat = req.url === '/v1/chat/completions';
      res.writeHead(200, { 'content-type': isChat ? 'text/event-stream' : 'text/plain; charset=utf-8' });
      const frame = (i: number): string => {
        if (!isChat) return `line ${i}\n`;
        const chunk = {
          id: 'chatcmpl-observed',
          object: 'chat.completion.chunk',
          created: Math.floor(Date.now() / 1000),
          model: 'observed-model',
          choices: [{ index: 0, delta: { content: `w${i} ` }, finish_reason: null }],
        };
        return `data: ${JSON.stringify(chunk)}\n\n`;
      };
      let i = 0;
      const step = () => {
        if (res.destroyed) return;
        if (i >= chunks) {
          res.end(isChat ? 'data: [DONE]\n\n' : '');
          return;
        }
        res.write(frame(i++));
        written[index] = i;
        const timer = setTimeout(() => {
          timers.delete(timer);
          step();
        }, gapMs);
        timers.add(timer);
      };
      step();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    closedAt,
    written,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
