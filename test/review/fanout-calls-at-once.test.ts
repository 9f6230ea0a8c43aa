/**
 * `n` fanned out to a provider that gives one choice per call runs at most FANOUT_CALLS_AT_ONCE calls at a
 * time, fewer for a large body (FANOUT_BODY_BYTES_AT_ONCE): each call holds its own serialized copy of the
 * request, so n = 128 started at once held 128 copies of a large prompt. The fake holds every request a
 * moment and counts how many it holds at once.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  FANOUT_BODY_BYTES_AT_ONCE,
  FANOUT_CALLS_AT_ONCE,
  fanoutCallsAtOnce,
} from '../../src/gateway/fanout.js';
import type { AdapterRequest } from '../../src/providers/types.js';
import { readAnthropicJsonFixture } from '../fakes/anthropic/fixtures.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;
const BODY_LIMIT = 2 * FANOUT_BODY_BYTES_AT_ONCE;
let server: Server;
let url: string;
let held = 0;
let mostHeld = 0;
let served = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      held++;
      mostHeld = Math.max(mostHeld, held);
      setTimeout(() => {
        held--;
        served++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(readAnthropicJsonFixture('anthropic-text.json')));
      }, 30);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gateway = await startGateway({ env: { GATEWAY_BODY_LIMIT_BYTES: String(BODY_LIMIT) } });
});

beforeEach(() => {
  held = 0;
  mostHeld = 0;
  served = 0;
});

function config() {
  return { provider: 'anthropic', api_key: 'sk-ant-held', custom_host: url };
}

function chatBody(n: number, contentBytes: number) {
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 16,
    n,
    messages: [{ role: 'user', content: 'x'.repeat(contentBytes) }],
  };
}

async function fanOut(n: number, contentBytes: number): Promise<Response> {
  return postWithConfig(gateway, '/chat/completions', config(), chatBody(n, contentBytes));
}

/** The same request sent in chunks: no `content-length` says how large it is. */
async function fanOutChunked(n: number, contentBytes: number): Promise<Response> {
  const text = new TextEncoder().encode(JSON.stringify(chatBody(n, contentBytes)));
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < text.length; at += 1024 * 1024)
        controller.enqueue(text.slice(at, at + 1024 * 1024));
      controller.close();
    },
  });
  return fetch(`${gateway.url}/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': gateway.adminKey,
      'x-gateway-config': JSON.stringify(config()),
    },
    body,
    duplex: 'half',
  } as RequestInit);
}

/** A small request whose text is large: its fields padded with spaces, which parsing drops. */
async function fanOutPadded(n: number, textBytes: number): Promise<Response> {
  const json = JSON.stringify(chatBody(n, 16));
  const text = `${json.slice(0, -1)}${' '.repeat(textBytes - json.length)}}`;
  return fetch(`${gateway.url}/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': gateway.adminKey,
      'x-gateway-config': JSON.stringify(config()),
    },
    body: text,
  });
}

afterAll(async () => {
  await gateway?.close();
  await new Promise((resolve) => server?.close(resolve));
});

describe('n fanned out', () => {
  it(`makes n calls, never more than ${FANOUT_CALLS_AT_ONCE} at once, and numbers every choice`, async () => {
    const n = FANOUT_CALLS_AT_ONCE * 2 + 3;
    const response = await fanOut(n, 64 * 1024);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: Array<{ index: number }> };
    expect(body.choices.map((choice) => choice.index)).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(served).toBe(n);
    expect(mostHeld).toBeGreaterThan(1);
    expect(mostHeld).toBeLessThanOrEqual(FANOUT_CALLS_AT_ONCE);
  });

  it('makes the calls of a body over half the bytes held at once one at a time', async () => {
    const response = await fanOut(3, FANOUT_BODY_BYTES_AT_ONCE / 2 + 1024);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: Array<{ index: number }> };
    expect(body.choices.map((choice) => choice.index)).toEqual([0, 1, 2]);
    expect(served).toBe(3);
    expect(mostHeld).toBe(1);
  });

  it('sizes a body sent in chunks (no content-length) by what it is, not as a small one', async () => {
    const response = await fanOutChunked(3, FANOUT_BODY_BYTES_AT_ONCE / 2 + 1024);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: Array<{ index: number }> };
    expect(body.choices.map((choice) => choice.index)).toEqual([0, 1, 2]);
    expect(served).toBe(3);
    expect(mostHeld).toBe(1);
  });

  it("sizes a client's body by the text it sent, as kept by the parser, not by measuring the parsed body", async () => {
    // Parsed, it is a few dozen bytes (8 calls at once); its text is over half the bytes held at once.
    const response = await fanOutPadded(3, FANOUT_BODY_BYTES_AT_ONCE / 2 + 1024);
    expect(response.status).toBe(200);
    expect(served).toBe(3);
    expect(mostHeld).toBe(1);
  });
});

describe('fanoutCallsAtOnce', () => {
  const request = (body: unknown, contentLength?: number) =>
    ({
      endpoint: 'chat',
      body,
      clientHeaders: contentLength === undefined ? {} : { 'content-length': String(contentLength) },
    }) as unknown as AdapterRequest;
  /** A body that fails the test if anything walks it. */
  const untouchable = new Proxy(
    {},
    {
      get: () => expect.fail('the body was walked'),
      ownKeys: () => expect.fail('the body was walked'),
    },
  );

  it('takes the size of the text the client sent, without walking the body', () => {
    expect(fanoutCallsAtOnce(request(untouchable), 'x'.repeat(1024))).toBe(FANOUT_CALLS_AT_ONCE);
    const large = 'x'.repeat(FANOUT_BODY_BYTES_AT_ONCE / 3);
    expect(fanoutCallsAtOnce(request(untouchable), large)).toBe(3);
    // Its UTF-8 bytes, not its characters.
    expect(fanoutCallsAtOnce(request(untouchable), 'é'.repeat(FANOUT_BODY_BYTES_AT_ONCE / 6))).toBe(3);
  });

  it("takes the larger of the text's size and the client's content-length", () => {
    const text = 'x'.repeat(1024);
    expect(fanoutCallsAtOnce(request(untouchable, FANOUT_BODY_BYTES_AT_ONCE / 2), text)).toBe(2);
    expect(fanoutCallsAtOnce(request(untouchable, 10), 'x'.repeat(FANOUT_BODY_BYTES_AT_ONCE / 2))).toBe(2);
  });

  it('measures a body with no text of its own at its written size, escapes included', () => {
    // 4M characters written as 24 MB: one call at a time, not four.
    const body = { model: 'm', messages: [{ role: 'user', content: '\u0001'.repeat(4 * 1024 * 1024) }] };
    expect(fanoutCallsAtOnce(request(body, 100))).toBe(1);
    const quotes = { model: 'm', messages: [{ role: 'user', content: '"'.repeat(3 * 1024 * 1024) }] };
    expect(fanoutCallsAtOnce(request(quotes))).toBe(2);
  });
});
