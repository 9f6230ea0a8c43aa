/**
 * Pass-through streams that a provider ends with its own error event, inside the 200 it already sent
 * (Anthropic's `event: error`, an `overloaded_error` mid-answer; Google's error object in a Gemini stream): relayed to the client as they came, and
 * recorded, priced and settled as the failed calls they are — as a model call on the same stream is —
 * not as answers that completed.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerFixturesDir } from '../fakes/cohere/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startWireUpstream, type WireReply, type WireUpstream } from '../helpers/wire-upstream.js';
import { client, ok } from '../management/http.js';
import { logsOf, traceHeaders } from '../routing/support.js';

const PER_MILLION = 1e-6;
const LIMIT = 100_000;

/** The recorded answer's events, one JSON text a line. */
function recordedEvents(provider: string, name: string): string[] {
  return readFileSync(path.join(providerFixturesDir(provider), name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

type SseEvent = { event?: string; data: string };

/** Anthropic's recorded stream as its wire sends it (`event: <type>`), ended after `count` events by its error. */
function anthropicFailing(count: number): WireReply {
  const events = recordedEvents('anthropic', 'anthropic-text.chunks.txt')
    .slice(0, count)
    .map((data) => ({ event: (JSON.parse(data) as { type: string }).type, data }));
  const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
  return { events: [...events, { event: 'error', data: JSON.stringify(error) }], done: false };
}

/** An upstream that sends `events` as a 200 stream, then drops the connection without ending it; to the
 * calls after the first, a whole answer. */
async function startDropping(events: SseEvent[]): Promise<{ url: string; close(): Promise<void> }> {
  let calls = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (calls++ > 0) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'message', usage: { input_tokens: 1, output_tokens: 1 } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const { event, data } of events) {
        res.write(`${event === undefined ? '' : `event: ${event}\n`}data: ${data}\n\n`);
      }
      setTimeout(() => res.socket?.destroy(), 20);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('a pass-through stream ended by the provider’s error event', () => {
  let gateway: TestGateway;
  let upstream: WireUpstream;
  /** What the upstream answers next: the test's reply, else a whole answer with its usage. */
  let next: WireReply | undefined;
  beforeAll(async () => {
    upstream = await startWireUpstream(() => {
      const reply = next ?? {
        json: JSON.stringify({ type: 'message', usage: { input_tokens: 1, output_tokens: 1 } }),
      };
      next = undefined;
      return reply;
    });
    gateway = await startGateway({ rateLimitClock: () => Date.UTC(2030, 0, 1) });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  // A proxy in front of Anthropic's Messages API, at a path of its own (the gateway's /v1/messages is its
  // own Messages endpoint, never passed through).
  const anthropic = () => ({ provider: 'anthropic', api_key: 'sk-ant-pt', custom_host: upstream.url });
  const body = JSON.stringify({
    model: 'claude-sonnet-4-5',
    max_tokens: 64,
    stream: true,
    messages: [{ role: 'user', content: 'Hello, how are you?' }],
  });

  const passThrough = async (
    config: Record<string, unknown>,
    headers: Record<string, string>,
    reply?: WireReply,
  ) => {
    next = reply;
    const response = await fetch(`${gateway.url}/proxy/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify(config),
        ...headers,
      },
      body,
    });
    const answer = Buffer.from(await response.arrayBuffer());
    return { response, answer };
  };

  /** A policy of LIMIT tokens a day per API key, met by the calls whose metadata `case` is `name`. */
  const tokenPolicy = async (name: string) => {
    await ok(
      client(gateway.url, gateway.adminKey).post('/policies/rate-limits', {
        conditions: [{ key: 'metadata.case', value: name }],
        group_by: [{ key: 'api_key' }],
        type: 'tokens',
        unit: 'rpd',
        value: LIMIT,
      }),
    );
    return { 'x-gateway-metadata': JSON.stringify({ case: name }) };
  };

  it('records the call as failed with the provider’s error, its usage what the stream reported', async () => {
    const { traceId, headers } = traceHeaders();
    // message_start (12 in, 1 out), content_block_start, ping, "Hello", "! I", then the error.
    const { response, answer } = await passThrough(anthropic(), headers, anthropicFailing(5));
    // The client has the provider's stream as it came, its error event included.
    expect(response.status).toBe(200);
    expect(answer.toString()).toContain('event: error');
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toMatchObject({
      endpoint: 'passthrough',
      status: 529,
      error_code: 'overloaded_error',
      model: 'claude-sonnet-4-5-20250929',
      prompt_tokens: 12,
      completion_tokens: 1,
      total_tokens: 13,
    });
    // The input Anthropic counted (and bills), and the output it had counted when the stream failed.
    expect(record.cost).toBeCloseTo((12 * 3 + 1 * 15) * PER_MILLION, 12);
  });

  it('costs nothing when the error came before the stream reported any usage', async () => {
    const { traceId, headers } = traceHeaders();
    await passThrough(anthropic(), headers, anthropicFailing(0));
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toMatchObject({ status: 529, error_code: 'overloaded_error', prompt_tokens: null });
    expect(record.cost).toBe(0);
  });

  it('records an OpenAI stream ended by an error chunk as failed, costing nothing without usage', async () => {
    const { traceId, headers } = traceHeaders();
    const chunks = recordedEvents('openai', 'chat/openai-text.chunks.txt').slice(0, 4);
    const error = {
      error: { message: 'The server had an error while processing your request.', type: 'server_error' },
    };
    const openai = { provider: 'openai', api_key: 'sk-pt', custom_host: upstream.url };
    const { response, answer } = await passThrough(openai, headers, {
      events: [...chunks, JSON.stringify(error)].map((data) => ({ data })),
      done: false,
    });
    expect(response.status).toBe(200);
    expect(answer.toString()).toContain('server_error');
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toMatchObject({
      endpoint: 'passthrough',
      status: 502,
      error_message: 'The server had an error while processing your request.',
      model: 'gpt-4.1-nano-2025-04-14',
      prompt_tokens: null,
    });
    expect(record.cost).toBe(0);
  });

  it("records a Gemini stream ended by Google's error object as that error, with its running totals", async () => {
    const { traceId, headers } = traceHeaders();
    const google = { provider: 'google', api_key: 'g-pt', custom_host: upstream.url };
    const first = recordedEvents('google', 'google-text.chunks.txt').slice(0, 1);
    const error = { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } };
    const { response, answer } = await passThrough(google, headers, {
      events: [...first, JSON.stringify(error)].map((data) => ({ data })),
      done: false,
    });
    expect(response.status).toBe(200);
    expect(answer.toString()).toContain('UNAVAILABLE');
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toMatchObject({
      endpoint: 'passthrough',
      status: 503,
      error_code: 'unavailable',
      error_message: 'The model is overloaded.',
      model: 'gemini-3-pro-preview',
      prompt_tokens: 9,
      total_tokens: 199,
    });
  });

  it('records the provider’s error, not a broken answer, when the connection drops after it', async () => {
    const { traceId, headers } = traceHeaders();
    // Anthropic's stream and its error event, then the connection lost without its end.
    const dropping = await startDropping((anthropicFailing(5) as { events: SseEvent[] }).events);
    try {
      // The client's connection is cut too: its read of the answer may fail.
      await passThrough({ ...anthropic(), custom_host: dropping.url }, headers).catch(() => undefined);
      const [record] = await logsOf(gateway, traceId, 1);
      expect(record).toMatchObject({
        endpoint: 'passthrough',
        status: 529,
        error_code: 'overloaded_error',
        prompt_tokens: 12,
        completion_tokens: 1,
      });
      expect(record.cost).toBeCloseTo((12 * 3 + 1 * 15) * PER_MILLION, 12);
    } finally {
      await dropping.close();
    }
  });

  describe('the circuit breaker', () => {
    /** A target whose circuit opens at its first failure, at an address of its own (its own circuit). */
    const guarded = (address: string) => ({
      ...anthropic(),
      custom_host: address,
      cb_config: { failure_threshold: 1, cooldown_interval: 60_000 },
    });
    const secondCall = async (target: Record<string, unknown>) => {
      const { traceId, headers } = traceHeaders();
      const { response } = await passThrough(target, headers);
      const [record] = await logsOf(gateway, traceId, 1);
      return { status: response.status, code: record.error_code };
    };

    it('counts a stream ended by an error event of a 5xx as a failure, as a model call’s', async () => {
      const target = guarded(`${upstream.url}/breaker-error`);
      await passThrough(target, {}, anthropicFailing(5));
      expect(await secondCall(target)).toEqual({ status: 503, code: 'circuit_open' });
    });

    it('counts a stream that broke off as a failure, as a model call’s', async () => {
      const events = recordedEvents('anthropic', 'anthropic-text.chunks.txt')
        .slice(0, 5)
        .map((data) => ({ event: (JSON.parse(data) as { type: string }).type, data }));
      const dropping = await startDropping(events);
      try {
        const target = guarded(dropping.url);
        await passThrough(target, {}).catch(() => undefined);
        expect(await secondCall(target)).toEqual({ status: 503, code: 'circuit_open' });
      } finally {
        await dropping.close();
      }
    });

    it('counts a stream ended by an error event of a 4xx or a 500 as an answer, as a model call’s', async () => {
      const target = guarded(`${upstream.url}/breaker-invalid`);
      const invalid = { type: 'error', error: { type: 'invalid_request_error', message: 'Bad' } };
      await passThrough(
        target,
        {},
        { events: [{ event: 'error', data: JSON.stringify(invalid) }], done: false },
      );
      expect(await secondCall(target)).toEqual({ status: 200, code: null });
    });
  });

  it('settles a tokens policy to the input reported and the output that went by', async () => {
    const headers = await tokenPolicy('pt-anthropic-error');
    const { answer } = await passThrough(anthropic(), headers, anthropicFailing(5));
    const second = await passThrough(anthropic(), headers);
    // The input message_start reported, and the answer's bytes as output: its own count (message_start's
    // one token) lags what was sent.
    const settled = 12 + Math.ceil(answer.byteLength / 4);
    const reservation = Math.ceil(body.length / 4);
    expect(Number(second.response.headers.get('x-ratelimit-remaining-tokens'))).toBe(
      LIMIT - settled - reservation,
    );
  });
});
