/**
 * The HTTP client for provider calls: one undici Agent (a keep-alive pool per origin), with connections
 * resolved through the custom-host policy. Bodies are streamed, never buffered by this module.
 */
import { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { guardedLookup, type CustomHostPolicy } from './custom-host.js';
import type { AbortSignalLike } from '../core/abort.js';
import type { UpstreamRequest } from '../providers/types.js';

export interface UpstreamClient {
  send(request: UpstreamRequest, signal: AbortSignalLike): Promise<Dispatcher.ResponseData>;
  close(): Promise<void>;
}

export function createUpstreamClient(policy: CustomHostPolicy): UpstreamClient {
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    // Deadlines are the pipeline's (request_timeout, stream idle); undici's own would cut long answers.
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { lookup: guardedLookup(policy) as never, timeout: 10_000 },
  });
  return {
    send(request, signal) {
      const url = new URL(request.url);
      return agent.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: request.method,
        headers: request.headers,
        body: isStreamed(request.body) ? Readable.from(request.body) : request.body,
        // undici takes any EventTarget-like signal (it reads `aborted` and `reason`, adds an abort listener).
        signal: signal as AbortSignal,
      });
    },
    close: () => agent.close(),
  };
}

function isStreamed(body: UpstreamRequest['body']): body is AsyncIterable<Uint8Array> {
  return typeof body === 'object' && body !== null && Symbol.asyncIterator in body;
}

/** Lower-cases and flattens undici's response headers. */
export function flattenHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
