// A fake of the Anthropic Messages API on 127.0.0.1. It checks `x-api-key` and `anthropic-version` as
// Anthropic does, records every request, and replays recorded answers: JSON bodies and SSE streams
// (`event: <type>` + `data: <json>`), with Anthropic's error shapes on demand, in a 200 stream too.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readAnthropicJsonFixture, readAnthropicStreamFixture } from './fixtures.js';

export interface FakeAnthropicOptions {
  apiKey?: string;
}

export interface RecordedAnthropicRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export type FakeAnthropicReply =
  | { kind: 'json'; fixture?: string; body?: unknown }
  /** Replays a `.chunks.txt` recording (or the given events, in the same wire format); `error` is sent as
   * an `event: error` after `afterEvents` events. */
  | {
      kind: 'stream';
      fixture?: string;
      events?: Array<Record<string, unknown>>;
      error?: { type: string; message: string; afterEvents: number };
    }
  | { kind: 'error'; status: number; type: string; message: string; headers?: Record<string, string> };

export interface FakeAnthropic {
  url: string;
  requests: RecordedAnthropicRequest[];
  enqueue(...replies: FakeAnthropicReply[]): void;
  close(): Promise<void>;
}

/** The fake's token count: one per word of the request's JSON (the real count is the model's tokenizer). */
export function countWords(body: unknown): number {
  return JSON.stringify(body)
    .split(/[\s"]+/)
    .filter((word) => word !== '').length;
}

export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const apiKey = options.apiKey ?? 'sk-ant-fake';
  const queue: FakeAnthropicReply[] = [];
  const requests: RecordedAnthropicRequest[] = [];
  let served = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });

  function handle(req: IncomingMessage, res: ServerResponse, text: string): void {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers[name] = value;
    if (headers['x-api-key'] === undefined) {
      sendError(res, 401, 'authentication_error', 'x-api-key header is required');
      return;
    }
    if (headers['x-api-key'] !== apiKey) {
      sendError(res, 401, 'authentication_error', 'invalid x-api-key');
      return;
    }
    if (!headers['anthropic-version']) {
      sendError(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
      return;
    }
    const countTokens = req.url === '/v1/messages/count_tokens';
    if (req.method !== 'POST' || (req.url !== '/v1/messages' && !countTokens)) {
      sendError(res, 404, 'not_found_error', `Not found: ${req.method} ${req.url}`);
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      sendError(
        res,
        400,
        'invalid_request_error',
        'There was an issue with the format of your JSON request.',
      );
      return;
    }
    if (countTokens) {
      requests.push({ method: 'POST', path: req.url as string, headers, body });
      res.writeHead(200, {
        'content-type': 'application/json',
        'request-id': `req_fake_count_${requests.length}`,
      });
      res.end(JSON.stringify({ input_tokens: countWords(body) }));
      return;
    }
    if (typeof body.max_tokens !== 'number') {
      sendError(res, 400, 'invalid_request_error', 'max_tokens: Field required');
      return;
    }
    requests.push({ method: 'POST', path: req.url as string, headers, body });
    const reply =
      queue.shift() ??
      (body.stream
        ? { kind: 'stream', fixture: 'anthropic-text.chunks.txt' }
        : { kind: 'json', fixture: 'anthropic-text.json' });
    send(res, reply, body.stream === true);
  }

  function send(res: ServerResponse, reply: FakeAnthropicReply, stream: boolean): void {
    served++;
    const requestId = `req_fake_${served}`;
    if (reply.kind === 'error') {
      sendError(res, reply.status, reply.type, reply.message, reply.headers);
      return;
    }
    if (reply.kind === 'json' || !stream) {
      const body =
        reply.kind === 'json'
          ? reply.fixture
            ? readAnthropicJsonFixture(reply.fixture)
            : reply.body
          : undefined;
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId });
      res.end(JSON.stringify(body));
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'request-id': requestId,
    });
    const lines = reply.fixture
      ? readAnthropicStreamFixture(reply.fixture)
      : (reply.events ?? []).map((event) => JSON.stringify(event));
    for (const [i, line] of lines.entries()) {
      if (reply.error && i === reply.error.afterEvents) {
        const error = { type: 'error', error: { type: reply.error.type, message: reply.error.message } };
        res.write(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
        break;
      }
      const type = (JSON.parse(line) as { type: string }).type;
      res.write(`event: ${type}\ndata: ${line}\n\n`);
    }
    res.end();
  }

  function sendError(
    res: ServerResponse,
    status: number,
    type: string,
    message: string,
    headers: Record<string, string> = {},
  ) {
    res.writeHead(status, {
      'content-type': 'application/json',
      'request-id': `req_fake_error_${served}`,
      ...headers,
    });
    res.end(
      JSON.stringify({ type: 'error', error: { type, message }, request_id: `req_fake_error_${served}` }),
    );
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...replies) => queue.push(...replies),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
