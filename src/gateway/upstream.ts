/**
 * The HTTP client for provider calls: one undici Agent (a keep-alive pool per origin), with connections
 * resolved through the custom-host policy. Bodies are streamed, never buffered by this module.
 */
import { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { closeWithin } from './close-agent.js';
import { guardedLookup, refusedByPolicy, type CustomHostPolicy } from './custom-host.js';
import { CallAbort, type AbortSignalLike } from '../core/abort.js';
import { GatewayError } from '../core/errors.js';
import type { OwnRequestSender, UpstreamRequest } from '../providers/types.js';
import { UpstreamCall, type UpstreamResponse } from './upstream-response.js';

export type { UpstreamBody, UpstreamResponse } from './upstream-response.js';
export { flattenHeaders, SET_COOKIE_SEPARATOR } from './upstream-response.js';

export interface UpstreamClient {
  send(request: UpstreamRequest, signal: AbortSignalLike): Promise<UpstreamResponse>;
  /** Lets the calls under way end for `timeoutMs` at most (when absent, a graceful close that waits for
   * them all); then the connections are destroyed, and the calls still running fail (close-agent.ts). */
  close(timeoutMs?: number): Promise<void>;
  /** Aborted once `close` destroys the connections: no call goes out after it, so none is worth a retry. */
  readonly stopped: AbortSignalLike;
  /** An adapter's own requests (a token exchange) on the same pool and policy: a connection the policy
   * refuses is a GatewayError `custom_host_refused`. */
  readonly ownRequests: OwnRequestSender;
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
  const stopped = new CallAbort();
  const reason = new Error('the gateway stopped while the provider was answering');
  const send = (request: UpstreamRequest, signal: AbortSignalLike): Promise<UpstreamResponse> => {
    if (stopped.aborted && !signal.aborted) return Promise.reject(reason);
    return sendOn(agent, request, signal);
  };
  return {
    stopped,
    send,
    ownRequests: {
      send: (request, signal) => send(request, signal).catch(refusedAsConfig),
    },
    close: (timeoutMs = Infinity) => closeWithin(agent, timeoutMs, reason, () => stopped.abort()),
  };
}

function refusedAsConfig(err: unknown): never {
  if (refusedByPolicy(err)) {
    throw new GatewayError('custom_host_refused', (err as Error).message, { cause: err });
  }
  throw err;
}

/** Sends `request` through `dispatcher`; resolves once the answer's head came, its body read as an
 * UpstreamBody (upstream-response.ts). The gateway's other calls out (a hook's webhook) go this way too. */
export function sendOn(
  dispatcher: Dispatcher,
  request: UpstreamRequest,
  signal: AbortSignalLike,
): Promise<UpstreamResponse> {
  if (signal.aborted) return Promise.reject(signal.reason);
  const url = splitUrl(request.url);
  const call = new UpstreamCall(signal);
  dispatcher.dispatch(
    {
      origin: url.origin,
      path: url.path,
      method: request.method,
      headers: request.headers,
      body: isStreamed(request.body) ? Readable.from(request.body) : request.body,
    },
    call,
  );
  return call.head;
}

/** Distinct URLs whose split is kept; a gateway calls a few endpoints of a few providers. */
const MAX_SPLIT_URLS = 1_000;
const splitUrls = new Map<string, { origin: string; path: string }>();

/** The origin and path of a URL, parsed once per distinct URL (WHATWG parsing is on every call's path). */
function splitUrl(href: string): { origin: string; path: string } {
  let split = splitUrls.get(href);
  if (split === undefined) {
    const url = new URL(href);
    split = { origin: url.origin, path: url.pathname + url.search };
    if (splitUrls.size >= MAX_SPLIT_URLS) splitUrls.clear();
    splitUrls.set(href, split);
  }
  return split;
}

function isStreamed(body: UpstreamRequest['body']): body is AsyncIterable<Uint8Array> {
  return typeof body === 'object' && body !== null && Symbol.asyncIterator in body;
}
