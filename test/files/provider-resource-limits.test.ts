/**
 * A provider's own APIs (Files, fine-tuning, Batch) are read whole under the same bound as a model call's
 * answer (GATEWAY_UPSTREAM_ANSWER_MAX_BYTES): an answer that never ends is closed and the call fails with
 * 502, rather than held to its last byte.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAIError } from '../core/support.js';

let gateway: TestGateway;
let upstream: Server;
let base: string;
const closed: boolean[] = [];

function endless(res: ServerResponse, status: number): void {
  const index = closed.push(false) - 1;
  res.once('close', () => (closed[index] = true));
  res.writeHead(status, { 'content-type': 'application/json' });
  res.write('{"object":"list","data":[');
  const write = () => {
    while (!res.destroyed && res.write('{"id":"file-x","object":"file"},'));
    if (!res.destroyed) res.once('drain', write);
  };
  write();
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    endless(res, req.url?.startsWith('/failing') ? 500 : 200);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  gateway = await startGateway({ env: { GATEWAY_UPSTREAM_ANSWER_MAX_BYTES: '8192' } });
});

afterAll(async () => {
  await gateway?.close();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe("a provider's Files API answer past GATEWAY_UPSTREAM_ANSWER_MAX_BYTES", () => {
  it.each([
    ['a list', '/ok/v1'],
    ['a failed answer', '/failing/v1'],
  ])('%s fails with 502 and is closed', async (_, prefix) => {
    const before = closed.length;
    const response = await fetch(`${gateway.url}/files`, {
      headers: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-files': 'provider',
        'x-gateway-config': JSON.stringify({
          provider: 'openai',
          api_key: 'sk-files',
          custom_host: `${base}${prefix}`,
        }),
      },
      signal: AbortSignal.timeout(10_000),
    });
    expect(response.status).toBe(502);
    const body = (await response.json()) as unknown;
    expectOpenAIError(body);
    expect(body.error.code).toBe('upstream_invalid_response');
    expect(body.error.message).toContain('larger than 8192 bytes');
    for (let i = 0; i < 100 && !closed[before]; i++) await new Promise((r) => setTimeout(r, 20));
    expect(closed[before]).toBe(true);
  });
});

describe("a provider's answer to a file sent to it, past GATEWAY_UPSTREAM_ANSWER_MAX_BYTES", () => {
  it('fails the fine-tuning job create with 502 and is closed', async () => {
    const line = JSON.stringify({
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
    });
    const form = new FormData();
    form.append('purpose', 'fine-tune');
    form.append('file', new Blob([`${line}\n${line}\n`]), 'train.jsonl');
    const stored = await fetch(`${gateway.url}/files`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': gateway.adminKey },
      body: form,
    });
    expect(stored.status, await stored.clone().text()).toBe(200);
    const { id } = (await stored.json()) as { id: string };

    const before = closed.length;
    // The copy of the file to the provider (a transfer, read under its idle deadline) is answered endlessly.
    const response = await fetch(`${gateway.url}/fine_tuning/jobs`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify({
          provider: 'openai',
          api_key: 'sk-files',
          custom_host: `${base}/ok/v1`,
        }),
      },
      body: JSON.stringify({ model: 'gpt-4o-mini', training_file: id }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(response.status).toBe(502);
    const body = (await response.json()) as unknown;
    expectOpenAIError(body);
    expect(body.error.code).toBe('upstream_invalid_response');
    expect(body.error.message).toContain('larger than 8192 bytes');
    for (let i = 0; i < 100 && !closed[before]; i++) await new Promise((r) => setTimeout(r, 20));
    expect(closed[before]).toBe(true);
  });
});
