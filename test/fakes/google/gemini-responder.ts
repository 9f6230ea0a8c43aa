// Answers Gemini `generateContent` / `streamGenerateContent` calls the way Google does, from the recorded
// samples or from scripted bodies; shared by the Gemini API fake and the Vertex AI fake.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readGoogleFixture, readGoogleStream } from './fixtures.js';

export type GeminiFakeBehaviour =
  /** Replay a recorded sample: `<name>.json` for a plain call, `<name>.chunks.txt` for a stream. */
  | { fixture: string }
  /** Answer a plain call with this body. */
  | { json: unknown }
  /** Answer a stream with these events (each one `data:` line). */
  | { events: unknown[] }
  /** Answer with this status and Google's error body (or `body` as given). */
  | { status: number; message?: string; rpcStatus?: string; body?: unknown; headers?: Record<string, string> }
  /** A 200 stream sending `after` events of a sample, then an `error` event, then ending. */
  | { streamErrorAfter: number; fixture?: string; error?: { code: number; message: string; status: string } };

export interface RecordedRequest {
  method: string;
  /** The path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: unknown;
}

const DEFAULT_STATUS_NAME: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function googleErrorBody(
  code: number,
  message: string,
  status?: string,
  details?: unknown[],
): unknown {
  return {
    error: {
      code,
      message,
      status: status ?? DEFAULT_STATUS_NAME[code] ?? 'UNKNOWN',
      ...(details ? { details } : {}),
    },
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendGoogleError(
  res: ServerResponse,
  code: number,
  message: string,
  status?: string,
  details?: unknown[],
): void {
  sendJson(res, code, googleErrorBody(code, message, status, details));
}

function sendSse(res: ServerResponse, events: string[], end = true): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const data of events) res.write(`data: ${data}\r\n\r\n`);
  if (end) res.end();
}

/** Answers one generate call. `stream` is true for `:streamGenerateContent` (SSE with `alt=sse`). */
export function answerGenerate(
  res: ServerResponse,
  stream: boolean,
  behaviour: GeminiFakeBehaviour | undefined,
): void {
  const chosen = behaviour ?? { fixture: stream ? 'google-text.chunks.txt' : 'google-text.json' };
  if ('status' in chosen) {
    if (chosen.body !== undefined) return sendJson(res, chosen.status, chosen.body, chosen.headers);
    return sendJson(
      res,
      chosen.status,
      googleErrorBody(chosen.status, chosen.message ?? 'Internal error encountered.', chosen.rpcStatus),
      chosen.headers,
    );
  }
  if ('streamErrorAfter' in chosen) {
    const lines = readGoogleStream(chosen.fixture ?? 'google-text.chunks.txt').slice(
      0,
      chosen.streamErrorAfter,
    );
    const error = chosen.error ?? {
      code: 503,
      message: 'The model is overloaded. Please try again later.',
      status: 'UNAVAILABLE',
    };
    return sendSse(res, [...lines, JSON.stringify({ error })]);
  }
  if ('events' in chosen) {
    if (!stream) return sendGoogleError(res, 500, 'fake: events scripted for a non-stream call');
    return sendSse(
      res,
      chosen.events.map((e) => JSON.stringify(e)),
    );
  }
  if ('json' in chosen) {
    if (stream) return sendGoogleError(res, 500, 'fake: json scripted for a stream call');
    return sendJson(res, 200, chosen.json);
  }
  if (stream) {
    const name = chosen.fixture.endsWith('.chunks.txt') ? chosen.fixture : `${chosen.fixture}.chunks.txt`;
    return sendSse(res, readGoogleStream(name));
  }
  const name = chosen.fixture.endsWith('.json') ? chosen.fixture : `${chosen.fixture}.json`;
  return sendJson(res, 200, readGoogleFixture(name));
}

/** A deterministic vector for a text, so tests can check which input produced which embedding. */
export function fakeEmbedding(text: string, dimensions = 8): number[] {
  const values: number[] = [];
  for (let i = 0; i < dimensions; i++) {
    const code = text.charCodeAt(i % Math.max(1, text.length)) || 1;
    values.push(Math.round(((code * (i + 1)) % 97) * 1000) / 97000);
  }
  return values;
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function parseJson(raw: string): unknown {
  try {
    return raw ? (JSON.parse(raw) as unknown) : undefined;
  } catch {
    return raw;
  }
}
