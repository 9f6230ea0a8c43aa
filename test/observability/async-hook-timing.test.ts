/**
 * An async hook never delays the answer: the call's record and metrics measure the call as the client
 * had it, not the hook that went on after it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { CHAT_BODY, postTraced, uniqueId, waitForLogs } from '../core/support.js';

const HOOK_DELAY_MS = 700;

let gateway: TestGateway;
let fake: FakeUpstream;
let webhook: Server;
let webhookUrl: string;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'timed' });
  webhook = createServer((request, response) => {
    request.resume();
    setTimeout(() => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ verdict: true }));
    }, HOOK_DELAY_MS);
  });
  await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
  webhookUrl = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/verdict`;
  gateway = await startGateway();
});
afterAll(async () => {
  await gateway?.close();
  await fake?.close();
  await new Promise((resolve) => webhook?.close(resolve));
});

describe('a call with a slow async hook', () => {
  it.each([false, true])('is recorded with its own latency, not the hook’s (stream: %s)', async (stream) => {
    const traceId = uniqueId('async-hook');
    const config = {
      provider: 'openai',
      api_key: 'sk-async-hook-test',
      custom_host: fake.url,
      after_request_hooks: [
        {
          id: 'audit',
          async: true,
          checks: [{ id: 'default.webhook', parameters: { webhookURL: webhookUrl } }],
        },
      ],
    };
    const started = Date.now();
    const response = await postTraced(
      gateway,
      '/chat/completions',
      traceId,
      { 'x-gateway-config': JSON.stringify(config) },
      { ...CHAT_BODY, stream },
    );
    await response.text();
    const answeredIn = Date.now() - started;
    expect(response.status).toBe(200);
    expect(answeredIn).toBeLessThan(HOOK_DELAY_MS);
    const [record] = await waitForLogs(gateway, { trace_id: traceId }, 1, { timeoutMs: 5000 });
    expect(record.hook_results).toMatchObject({
      after_request_hooks: [{ id: 'audit', async: true, verdict: true }],
    });
    expect(record.latency_ms).toBeLessThanOrEqual(answeredIn);
  });
});
