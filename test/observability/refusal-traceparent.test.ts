/**
 * Every /v1 answer carries a `traceparent`, the refusals made before the /v1 hook sets the trace headers
 * too: a request no route takes, a path the router cannot read, a malformed trace header, a request that
 * reaches a stopping node. Each is the trace named by its `x-gateway-trace-id`, or a new one.
 */
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otelTraceId } from '../../src/observability/tracing.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { CHAT_BODY, parseRawResponses, providerHeaders } from '../core/support.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

/** The answer's traceparent names its trace (by the `x-gateway-trace-id` it carries) and a span. */
function expectTraceparent(headers: { get(name: string): string | null }): string {
  const traceId = headers.get('x-gateway-trace-id');
  expect(traceId).toBeTruthy();
  const traceparent = headers.get('traceparent');
  expect(traceparent).toMatch(TRACEPARENT);
  expect(TRACEPARENT.exec(traceparent!)![1]).toBe(otelTraceId(traceId!));
  return traceparent!;
}

let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'refusal-traceparent' });
});
afterAll(async () => {
  await fake?.close();
});

describe('a refusal before the /v1 hook', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startGateway();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('carries a traceparent on a 404 for a method no /v1 route takes', async () => {
    const response = await fetch(`${gateway.url}/no-such-thing`, {
      method: 'OPTIONS',
      headers: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-trace-id': 'trace-404' },
    });
    expect(response.status).toBe(404);
    expect(response.headers.get('x-gateway-trace-id')).toBe('trace-404');
    expect(response.headers.get('x-request-id')).toBe('trace-404');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expectTraceparent(response.headers);
  });

  it('carries a traceparent on a path the router cannot read', async () => {
    const response = await fetch(`${gateway.origin}/v1/%C0%AF`, {
      headers: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-span-id': 'b7ad6b7169203331' },
    });
    expect(response.status).toBe(400);
    // The client's span is the answer's.
    expect(expectTraceparent(response.headers).split('-')[2]).toBe('b7ad6b7169203331');
  });

  it('starts a new trace for a malformed trace header, and says so in traceparent', async () => {
    const client = '4bf92f3577b34da6a3ce929d0e0e4736';
    const response = await fetch(`${gateway.url}/models`, {
      headers: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-span-id': 'not a span id',
        traceparent: `00-${client}-00f067aa0ba902b7-01`,
      },
    });
    expect(response.status).toBe(400);
    const traceparent = expectTraceparent(response.headers);
    expect(traceparent.split('-')[1]).not.toBe(client);
  });

  it('starts a new trace when the traceparent itself is malformed', async () => {
    const response = await fetch(`${gateway.url}/models`, {
      headers: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-trace-id': 'has spaces in it',
        traceparent: '00-not-a-traceparent',
      },
    });
    expect(response.status).toBe(400);
    expectTraceparent(response.headers);
  });
});

describe('a request that reaches a stopping node', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startGateway({ env: { GATEWAY_SHUTDOWN_GRACE_MS: '5000' } });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('is refused with a traceparent of the trace it named', async () => {
    // A call in flight keeps its connection open through the stop; a second request follows it there.
    fake.enqueue({ delayMs: 800 });
    const before = fake.requests.length;
    const { hostname, port } = new URL(gateway.origin);
    const socket = net.connect(Number(port), hostname);
    const parts: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => parts.push(chunk));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const headers = Object.entries(providerHeaders(gateway, fake, { 'content-type': 'application/json' }))
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    const body = JSON.stringify(CHAT_BODY);
    const request = `POST /v1/chat/completions HTTP/1.1\r\nhost: ${hostname}\r\n${headers}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    socket.write(request);
    for (let i = 0; i < 100 && fake.requests.length === before; i++) await sleep(10);
    const closing = gateway.server.close();
    await sleep(100);
    socket.write(
      request.replace(
        '\r\n\r\n',
        '\r\nx-gateway-trace-id: trace-stopping\r\nx-gateway-span-id: 00f067aa0ba902b7\r\n\r\n',
      ),
    );
    await Promise.race([ended, sleep(5000)]);
    socket.destroy();
    await closing;

    const [first, second] = parseRawResponses(Buffer.concat(parts));
    expect(first?.status).toBe(200);
    expect(second?.status).toBe(503);
    expect(second!.headers['x-gateway-trace-id']).toBe('trace-stopping');
    expect(second!.headers.traceparent).toBe(`00-${otelTraceId('trace-stopping')}-00f067aa0ba902b7-01`);
  });
});
