/**
 * Shared pieces of the routing and resilience suites: config targets pointing at fake upstreams, an
 * `openai` SDK client bound to a config, a raw SSE reader (to see `[DONE]` and error events exactly as
 * sent), and a reader of a request's log records.
 */
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll } from 'vitest';
import { startFakeOpenAI, type FakeOpenAIOptions, type FakeUpstream } from '../fakes/openai/server.js';
import { postChat, type TestGateway } from '../helpers/gateway.js';

export { postChat };
import type { LogRecord } from '../../src/store/types.js';

export type Config = Record<string, unknown>;

/**
 * Starts an OpenAI-wire fake (answering as `name`) whenever a test of the file asks for one; each is closed
 * once the file's tests are done.
 */
export function openAIFakesForFile(): (name: string, options?: FakeOpenAIOptions) => Promise<FakeUpstream> {
  const fakes: FakeUpstream[] = [];
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.close()));
  });
  return async (name, options = {}) => {
    const upstream = await startFakeOpenAI({ name, ...options });
    fakes.push(upstream);
    return upstream;
  };
}

/** A config target calling the fake through the OpenAI adapter. */
export function target(fake: FakeUpstream, extra: Config = {}): Config {
  return { provider: 'openai', api_key: 'sk-test', custom_host: fake.url, ...extra };
}

export function client(gateway: TestGateway, config: Config, headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({
    baseURL: gateway.url,
    apiKey: 'unused',
    maxRetries: 0,
    timeout: 120_000,
    defaultHeaders: {
      'x-gateway-api-key': gateway.adminKey,
      'x-gateway-config': JSON.stringify(config),
      ...headers,
    },
  });
}

export function traceHeaders(): { traceId: string; headers: Record<string, string> } {
  const traceId = `t-${randomUUID()}`;
  return { traceId, headers: { 'x-gateway-trace-id': traceId } };
}

export interface RawStream {
  status: number;
  headers: Headers;
  /** Parsed `data:` payloads, in order; `[DONE]` kept as the string. */
  events: unknown[];
  done: boolean;
  text: string;
  elapsedMs: number;
}

/** Streams a chat completion with fetch and returns every event exactly as the gateway sent it. */
export async function rawChatStream(
  gateway: TestGateway,
  config: Config,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<RawStream> {
  const started = performance.now();
  const response = await postChat(gateway, config, { ...body, stream: true }, headers);
  const raw = await response.text();
  const events: unknown[] = [];
  for (const block of raw.split('\n\n')) {
    const line = block.trim();
    if (!line.startsWith('data: ')) continue;
    const data = line.slice('data: '.length);
    events.push(data === '[DONE]' ? data : JSON.parse(data));
  }
  let text = '';
  for (const event of events) {
    const choices = (event as { choices?: { delta?: { content?: string } }[] }).choices;
    text += choices?.[0]?.delta?.content ?? '';
  }
  return {
    status: response.status,
    headers: response.headers,
    events,
    done: events.at(-1) === '[DONE]',
    text,
    elapsedMs: performance.now() - started,
  };
}

/** The log records of one trace (request and attempts), once at least `count` are written. */
export async function logsOf(gateway: TestGateway, traceId: string, count: number): Promise<LogRecord[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const response = await fetch(`${gateway.url}/logs?trace_id=${encodeURIComponent(traceId)}&limit=100`, {
      headers: { 'x-gateway-api-key': gateway.adminKey },
    });
    const page = (await response.json()) as { data: LogRecord[] };
    if (page.data.length >= count || Date.now() > deadline) {
      // Attempts that start in the same millisecond are ordered by their place in the tree, then by retry.
      return page.data.sort(
        (a, b) =>
          a.created_at_ms - b.created_at_ms ||
          (a.target ?? '').localeCompare(b.target ?? '') ||
          a.retry_count - b.retry_count,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The content the fake streams for a reply text split into `chunks` pieces (see the fake's splitter). */
export const userMessage = (content: string) => [{ role: 'user' as const, content }];
