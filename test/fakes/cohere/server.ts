// A fake of Cohere's v2 HTTP API on 127.0.0.1: Chat (JSON and SSE) and Embed, answering with the recorded
// samples of provider-fixtures/cohere/, checking `Authorization: Bearer`, and failing in Cohere's own shapes.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readCohereChunks, readCohereJson } from './fixtures.js';

export type CohereFakeBehaviour =
  /** Replay a recorded sample: `<name>.json` for a plain call, `<name>.chunks.txt` for a stream. */
  | { fixture: string }
  /** Answer a plain call with this body. */
  | { json: unknown }
  /** Answer a stream with these events (each sent as `event: <type>` + `data: <json>`). */
  | { events: Record<string, unknown>[] }
  /** Answer with this status and a Cohere error body (`{ id, message }`), or `body` as given. */
  | { status: number; message?: string; body?: unknown; headers?: Record<string, string> }
  /** A 200 stream that sends `after` events of a sample, then ends with Cohere's error message-end. */
  | { streamErrorAfter: number; fixture?: string; error?: string };

export interface CohereRecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface FakeCohere {
  /** `http://127.0.0.1:PORT`: Cohere's base URL, to use as `custom_host`. */
  url: string;
  apiKey: string;
  requests: CohereRecordedRequest[];
  enqueue(...behaviours: CohereFakeBehaviour[]): void;
  close(): Promise<void>;
}

export interface FakeCohereOptions {
  /** The key the fake accepts; default `co-test-key`. */
  apiKey?: string;
}

export async function startFakeCohere(options: FakeCohereOptions = {}): Promise<FakeCohere> {
  const apiKey = options.apiKey ?? 'co-test-key';
  const requests: CohereRecordedRequest[] = [];
  const queue: CohereFakeBehaviour[] = [];

  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      let body: unknown = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        // kept as text
      }
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
      handle(req, res, path, body);
    });
  });

  function handle(req: IncomingMessage, res: ServerResponse, path: string, body: unknown): void {
    const auth = req.headers.authorization;
    if (!auth) return sendError(res, 401, 'no api key supplied');
    if (auth !== `Bearer ${apiKey}`) return sendError(res, 401, 'invalid api token');
    if (req.method !== 'POST') return sendError(res, 404, `${req.method} ${path} not found`);
    const request = (body ?? {}) as Record<string, unknown>;
    if (path === '/v2/chat') return chat(res, request, queue.shift());
    if (path === '/v2/embed') return embed(res, request, queue.shift());
    return sendError(res, 404, `${path} not found`);
  }

  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    requests,
    enqueue: (...behaviours) => queue.push(...behaviours),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function chat(
  res: ServerResponse,
  request: Record<string, unknown>,
  behaviour: CohereFakeBehaviour | undefined,
): void {
  const stream = request.stream === true;
  const chosen = behaviour ?? { fixture: 'cohere-text' };
  if ('status' in chosen) {
    if (chosen.body !== undefined) return sendJson(res, chosen.status, chosen.body, chosen.headers);
    return sendError(res, chosen.status, chosen.message ?? `fake failure ${chosen.status}`, chosen.headers);
  }
  if ('streamErrorAfter' in chosen) {
    const events = readCohereChunks(chosen.fixture ?? 'cohere-text').slice(0, chosen.streamErrorAfter);
    events.push({
      type: 'message-end',
      delta: {
        finish_reason: 'ERROR',
        error: chosen.error ?? 'internal server error, this has been reported',
      },
    });
    return sendStream(res, events);
  }
  if ('events' in chosen) return sendStream(res, chosen.events);
  if ('json' in chosen) return sendJson(res, 200, chosen.json);
  if (stream) return sendStream(res, readCohereChunks(chosen.fixture));
  return sendJson(res, 200, readCohereJson(chosen.fixture));
}

function embed(
  res: ServerResponse,
  request: Record<string, unknown>,
  behaviour: CohereFakeBehaviour | undefined,
): void {
  if (behaviour && 'status' in behaviour) {
    return sendError(
      res,
      behaviour.status,
      behaviour.message ?? `fake failure ${behaviour.status}`,
      behaviour.headers,
    );
  }
  const texts = Array.isArray(request.texts) ? (request.texts as string[]) : [];
  if (texts.length === 0) return sendError(res, 400, 'invalid request: texts must not be empty');
  if (texts.length > 96) {
    return sendError(
      res,
      400,
      `invalid request: total number of texts must be at most 96 - received ${texts.length}`,
    );
  }
  if (!request.input_type)
    return sendError(res, 400, 'invalid request: valid input_type must be provided with the provided model');
  const sample = readCohereJson('cohere-embedding') as {
    embeddings: { float: number[][] };
    meta: Record<string, unknown>;
  };
  const vectors = texts.map((_, i) => sample.embeddings.float[i % sample.embeddings.float.length]);
  sendJson(res, 200, {
    ...sample,
    id: randomUUID(),
    texts,
    embeddings: { float: vectors },
    meta: { ...sample.meta, billed_units: { input_tokens: texts.join(' ').split(/\s+/).length } },
  });
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { id: randomUUID(), message }, headers);
}

function sendStream(res: ServerResponse, events: Record<string, unknown>[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
  res.end();
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}
