// A fake OpenAI-compatible upstream on 127.0.0.1 for tests: real HTTP, real SSE, deterministic answers
// derived from the request, every request recorded, and faults injected by a script queue or by model.
// Plain node:http keeps it fast enough to never be the bottleneck of a load test.
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatCompletion, chatCompletionChunks, planChat, type ChatRequest } from './chat.js';
import {
  completionText,
  textCompletion,
  textCompletionChunks,
  type CompletionRequest,
} from './completions.js';
import { embeddingResponse, type EmbeddingRequest } from './embeddings.js';
import { errorBodyForStatus } from './errors.js';
import { newRequestId } from './ids.js';
import { listModels, modelObject } from './models.js';
import { FakeResources } from './resources.js';
import {
  planResponse,
  responseAnswer,
  responseEvents,
  responseFrames,
  type ResponsesRequestBody,
} from './responses.js';
import { planFrames, writeEventStream } from './sse.js';
import type { FakeBehaviour, FakeOpenAIOptions, FakeUpstream, RecordedRequest } from './types.js';

export type { FakeBehaviour, FakeOpenAIOptions, FakeUpstream, RecordedRequest } from './types.js';
export { faults, openAIErrors } from './errors.js';
export { fakeVector } from './embeddings.js';

const MODEL_STATUS = /^fake-status-(\d{3})$/;

/** Behaviours selected by model name without any set-up: handy when the model sits deep in a routing config. */
function builtInModelBehaviour(model: unknown): FakeBehaviour | undefined {
  if (typeof model !== 'string' || !model.startsWith('fake-')) return undefined;
  const status = MODEL_STATUS.exec(model);
  if (status) return { status: Number(status[1]) };
  if (model === 'fake-hang') return { hang: true };
  if (model === 'fake-reset') return { reset: true };
  if (model === 'fake-cut') return { chunks: 10, cutAfter: 4 };
  if (model === 'fake-slow') return { firstByteDelayMs: 1000 };
  return undefined;
}

function parseBody(raw: Buffer, contentType: string | undefined): unknown {
  if (raw.length === 0) return undefined;
  const first = raw[0];
  if ((contentType ?? '').includes('json') || first === 0x7b /* { */ || first === 0x5b /* [ */) {
    try {
      return JSON.parse(raw.toString('utf8'));
    } catch {
      return raw.toString('utf8');
    }
  }
  if (!contentType || contentType.startsWith('text/') || contentType.includes('x-www-form-urlencoded')) {
    return raw.toString('utf8');
  }
  return undefined;
}

function parseQuery(search: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of search) {
    const prev = query[key];
    query[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return query;
}

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeUpstream> {
  const name = options.name ?? 'fake-openai';
  const maxRecorded = options.maxRecorded ?? 10_000;
  const requests: RecordedRequest[] = [];
  const queue: FakeBehaviour[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const resources = new FakeResources(name);

  const baseHeaders = (): OutgoingHttpHeaders => ({
    'x-request-id': newRequestId(),
    'openai-version': '2020-10-01',
    'openai-processing-ms': '1',
    'openai-organization': 'org-fake',
    'x-ratelimit-limit-requests': '10000',
    'x-ratelimit-remaining-requests': '9999',
    'x-ratelimit-limit-tokens': '10000000',
    'x-ratelimit-remaining-tokens': '9999000',
    'x-fake-upstream': name,
  });

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  function sendJson(
    res: ServerResponse,
    status: number,
    value: unknown,
    extra?: Record<string, string>,
  ): void {
    const body = JSON.stringify(value);
    res.writeHead(status, {
      ...baseHeaders(),
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      ...extra,
    });
    res.end(body);
  }

  function sendStatic(res: ServerResponse, behaviour: FakeBehaviour, status: number): void {
    const body = behaviour.body ?? (status >= 400 ? errorBodyForStatus(status) : '');
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      res.writeHead(status, {
        ...baseHeaders(),
        'content-type': 'text/plain; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        ...behaviour.headers,
      });
      res.end(body);
      return;
    }
    sendJson(res, status, body, behaviour.headers);
  }

  function sendStream(res: ServerResponse, events: object[], behaviour: FakeBehaviour): void {
    res.writeHead(200, {
      ...baseHeaders(),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      ...behaviour.headers,
    });
    writeEventStream(res, planFrames(events, behaviour), behaviour, timers);
  }

  function invalidRequest(res: ServerResponse, message: string, param: string | null = null): void {
    sendJson(res, 400, { error: { message, type: 'invalid_request_error', param, code: null } });
  }

  function answer(req: RecordedRequest, res: ServerResponse, behaviour: FakeBehaviour): void {
    const { method, path } = req;
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
    const wantsJsonBody = method === 'POST' && path.startsWith('/v1/') && path !== '/v1/audio/speech';

    if (
      wantsJsonBody &&
      typeof req.body === 'string' &&
      /^(chat\/)?completions$|^embeddings$/.test(path.slice(4))
    ) {
      invalidRequest(
        res,
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
      );
      return;
    }
    const includeUsage =
      (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;

    if (method === 'POST' && path === '/v1/chat/completions') {
      const chat = body as ChatRequest;
      if (typeof chat.model !== 'string') return invalidRequest(res, 'you must provide a model parameter');
      if (!Array.isArray(chat.messages) || chat.messages.length === 0) {
        return invalidRequest(
          res,
          "Invalid 'messages': empty array. Expected an array with minimum length 1.",
          'messages',
        );
      }
      const plan = planChat(name, chat, behaviour.text);
      if (behaviour.serviceTier) plan.serviceTier = behaviour.serviceTier;
      if (chat.stream === true)
        sendStream(res, chatCompletionChunks(plan, includeUsage, behaviour.chunks), behaviour);
      else sendJson(res, 200, chatCompletion(plan), behaviour.headers);
      return;
    }
    if (method === 'POST' && path === '/v1/responses') {
      const request = body as ResponsesRequestBody;
      if (typeof request.model !== 'string')
        return invalidRequest(res, "Missing required parameter: 'model'.", 'model');
      if (request.input === undefined)
        return invalidRequest(res, "Missing required parameter: 'input'.", 'input');
      const plan = planResponse(name, request, behaviour.text);
      // The tier the answer names: the one asked for, unless the behaviour says another served it.
      const served = behaviour.serviceTier ? { ...request, service_tier: behaviour.serviceTier } : request;
      if (request.stream === true) {
        res.writeHead(200, {
          ...baseHeaders(),
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
          ...behaviour.headers,
        });
        writeEventStream(res, responseFrames(responseEvents(served, plan)), behaviour, timers);
      } else sendJson(res, 200, responseAnswer(served, plan), behaviour.headers);
      return;
    }
    if (method === 'POST' && path === '/v1/completions') {
      const request = body as CompletionRequest;
      if (typeof request.model !== 'string') return invalidRequest(res, 'you must provide a model parameter');
      const text = behaviour.text ?? completionText(name, request);
      if (body.stream === true) {
        sendStream(res, textCompletionChunks(name, request, text, includeUsage, behaviour.chunks), behaviour);
      } else sendJson(res, 200, textCompletion(name, request, text), behaviour.headers);
      return;
    }
    if (method === 'POST' && path === '/v1/embeddings') {
      if (body.input === undefined) return invalidRequest(res, "'input' is a required property", 'input');
      sendJson(res, 200, embeddingResponse(name, body as EmbeddingRequest), behaviour.headers);
      return;
    }
    if (method === 'GET' && path === '/v1/models')
      return sendJson(res, 200, listModels(name), behaviour.headers);
    if (method === 'GET' && path.startsWith('/v1/models/')) {
      return sendJson(
        res,
        200,
        modelObject(decodeURIComponent(path.slice('/v1/models/'.length))),
        behaviour.headers,
      );
    }
    if (method === 'POST' && path === '/v1/audio/speech') {
      const audio = speechBytes(name, typeof body.input === 'string' ? body.input : '');
      res.writeHead(200, {
        ...baseHeaders(),
        'content-type': 'audio/mpeg',
        'content-length': audio.length,
        ...behaviour.headers,
      });
      res.end(audio);
      return;
    }
    if (path === '/v1/fake/text-error') {
      const status = Number(req.query.status ?? 503) || 503;
      return sendStatic(
        res,
        { body: `${name}: upstream text error ${status}\n`, headers: behaviour.headers },
        status,
      );
    }
    // Everything else: say exactly what arrived, so pass-through tests can check forwarding.
    sendJson(
      res,
      200,
      {
        fake: name,
        method,
        path,
        query: req.query,
        headers: req.headers,
        body: req.body ?? null,
        body_base64: req.rawBody.length > 0 ? req.rawBody.toString('base64') : null,
      },
      behaviour.headers,
    );
  }

  async function handle(req: IncomingMessage, res: ServerResponse, recorded: RecordedRequest): Promise<void> {
    const model = (recorded.body as { model?: unknown } | undefined)?.model;
    const behaviour: FakeBehaviour =
      queue.shift() ??
      (typeof model === 'string' ? options.models?.[model] : undefined) ??
      builtInModelBehaviour(model) ??
      options.defaultBehaviour ??
      {};
    const isStream = (recorded.body as { stream?: unknown } | undefined)?.stream === true;
    const delay =
      (options.latencyMs ?? 0) +
      (behaviour.firstByteDelayMs ?? 0) +
      (isStream ? 0 : (behaviour.delayMs ?? 0));
    if (delay > 0) await wait(delay);
    if (behaviour.until) await behaviour.until.catch(() => undefined);
    if (res.destroyed) return;
    if (behaviour.reset) {
      req.socket.destroy();
      return;
    }
    if (behaviour.hang) return;
    const status = behaviour.status;
    if (status !== undefined && (status >= 300 || behaviour.body !== undefined)) {
      sendStatic(res, behaviour, status);
      return;
    }
    if (recorded.path.startsWith('/v1/')) {
      const handled = await resources.handle(
        recorded.method,
        recorded.path.slice(3),
        recorded.query,
        req.headers['content-type'],
        recorded.rawBody,
      );
      if (handled?.lost) {
        req.socket.destroy();
        return;
      }
      if (handled?.raw) {
        res.writeHead(handled.status, {
          ...baseHeaders(),
          'content-type': 'application/octet-stream',
          'content-length': handled.raw.length,
        });
        res.end(handled.raw);
        return;
      }
      if (handled) return sendJson(res, handled.status, handled.body, behaviour.headers);
    }
    answer(recorded, res, behaviour);
  }

  const server = createServer((req, res) => {
    const receivedAt = Date.now();
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      const rawBody = parts.length === 1 ? parts[0] : Buffer.concat(parts);
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path: q === -1 ? url : url.slice(0, q),
        query: q === -1 ? {} : parseQuery(new URLSearchParams(url.slice(q + 1))),
        headers: req.headers,
        body: parseBody(rawBody, req.headers['content-type']),
        rawBody,
        receivedAt,
      };
      requests.push(recorded);
      if (requests.length > maxRecorded) requests.splice(0, requests.length - maxRecorded);
      handle(req, res, recorded).catch((err: unknown) => {
        if (!res.headersSent)
          sendJson(res, 500, {
            error: { message: String(err), type: 'server_error', param: null, code: null },
          });
        else res.destroy();
      });
    });
  });
  // Clients under load keep connections alive longer than Node's 5 s default.
  server.keepAliveTimeout = 65_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  return {
    url: `${origin}/v1`,
    origin,
    port,
    name,
    requests,
    enqueue: (...behaviours) => {
      queue.push(...behaviours);
    },
    reset: () => {
      requests.length = 0;
      queue.length = 0;
    },
    pending: () => queue.length,
    resources,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        // hung and stalled responses would otherwise keep close() waiting forever
        server.closeAllConnections();
      }),
  };
}

/** Bytes that look like an MP3 (ID3 header) and carry the fake's name and the input, so tests can compare. */
function speechBytes(name: string, input: string): Buffer {
  const header = Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]);
  const marker = Buffer.from(`${name}:${input}`, 'utf8');
  const frames = Buffer.alloc(256);
  for (let i = 0; i < frames.length; i++) frames[i] = (i * 31 + marker.length) & 0xff; // includes non-UTF-8 bytes
  return Buffer.concat([header, marker, frames]);
}
