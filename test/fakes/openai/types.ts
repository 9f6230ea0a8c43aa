import type { IncomingHttpHeaders } from 'node:http';
import type { FakeResources } from './resources.js';

/**
 * What the fake does with one request. Fields combine: `{ chunks: 60, cutAfter: 40, chunkDelayMs: 5 }`
 * streams 60 content chunks 5 ms apart and kills the connection after the 40th event.
 * Stream positions count every `data:` event sent (the role chunk is event 1).
 */
export interface FakeBehaviour {
  /** Answer with this status. With no `body`, an OpenAI-shaped error body for the status is sent (for >= 400). */
  status?: number;
  /** Object → JSON; string or Buffer → sent as is (text/plain unless `headers` says otherwise). */
  body?: unknown;
  /** Extra response headers (also applied to normal answers), e.g. `{ 'retry-after': '2' }`. */
  headers?: Record<string, string>;
  /** Destroy the socket before any header is sent. */
  reset?: boolean;
  /** Never answer; the connection stays open until the client gives up or the fake closes. */
  hang?: boolean;
  /** Delay before the status line (for streams and non-streams alike). */
  firstByteDelayMs?: number;
  /** Delay before a non-stream answer (adds to `firstByteDelayMs`). */
  delayMs?: number;
  /** Answer only once this has settled (after the delays): holds a request until the test lets it go. */
  until?: Promise<unknown>;
  /** Gap between stream events. */
  chunkDelayMs?: number;
  /** Number of content chunks in a stream (default: one per word of the reply). */
  chunks?: number;
  /** Destroy the connection after K events: no `[DONE]`, no clean end of the chunked body. */
  cutAfter?: number;
  /** Stop sending after K events but keep the socket open. */
  stallAfter?: number;
  /** While stalled, send an SSE comment (`: keep-alive`) this often, as proxies and stuck servers do. */
  keepAliveMs?: number;
  /** Event K (1-based) is a `data:` line that is not JSON; the stream then goes on. */
  malformedAt?: number;
  /** End the stream cleanly after the last (usage) chunk but without `data: [DONE]`. */
  noDone?: boolean;
  /** After K events send `data: {"error": {...}}` inside the 200 stream and end it. */
  errorEventAfter?: number;
  /** Reply text instead of the echo of the last user message. */
  text?: string;
  /** The tier an answer says served it, instead of the one asked for (priority served on default). */
  serviceTier?: string;
}

export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/chat/completions`. */
  path: string;
  query: Record<string, string | string[]>;
  headers: IncomingHttpHeaders;
  /** Parsed JSON when the body is JSON, the text when it is other text, else undefined (see `rawBody`). */
  body: unknown;
  rawBody: Buffer;
  /** `Date.now()` when the request's headers arrived. */
  receivedAt: number;
}

export interface FakeOpenAIOptions {
  /** Fixed delay before answering every request. */
  latencyMs?: number;
  /** Carried in reply texts, embeddings seeds, the `x-fake-upstream` header and echo bodies. */
  name?: string;
  /** Behaviour for every request whose model has this exact name (checked after the script queue). */
  models?: Record<string, FakeBehaviour>;
  /** Behaviour when neither the queue nor the model table says otherwise. */
  defaultBehaviour?: FakeBehaviour;
  /** Keep at most this many recorded requests (oldest dropped); default 10,000. */
  maxRecorded?: number;
}

export interface FakeUpstream {
  /** The fake's Files, fine-tuning and Batch APIs and their state (resources.ts). */
  resources: FakeResources;
  /** Base URL ending in `/v1`, e.g. `http://127.0.0.1:40123/v1`. */
  url: string;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
  name: string;
  requests: RecordedRequest[];
  /** Queue behaviours, consumed one per request (any path) before the model table and the default. */
  enqueue(...behaviours: FakeBehaviour[]): void;
  /** Forget recorded requests and queued behaviours. */
  reset(): void;
  /** Number of behaviours still queued. */
  pending(): number;
  close(): Promise<void>;
}
