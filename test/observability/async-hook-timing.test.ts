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

let gateway: TestGateway;
let fake: FakeUpstream;
let webhook: Server;
let webhookUrl: string;
/** The webhook's answers, held until the test lets them go (then it answers at once, a hook that starts
 * after the call's answer too): the hook answers after the call's answer, however slow the machine. */
let holding = true;
const held: Array<() => void> = [];
const releaseHook = () => {
  holding = false;
  held.splice(0).forEach((release) => release());
};

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'timed' });
  webhook = createServer((request, response) => {
    request.resume();
    const answer = () => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ verdict: true }));
    };
    if (holding) held.push(answer);
    else answer();
  });
  await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
  webhookUrl = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/verdict`;
  gateway = await startGateway();
});
afterAll(async () => {
  releaseHook();
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
    holding = true;
    const started = Date.now();
    const response = await postTraced(
      gateway,
      '/chat/completions',
      traceId,
      { 'x-gateway-config': JSON.stringify(config) },
      { ...CHAT_BODY, stream },
    );
    // The hook has not answered yet (the webhook holds it): the call was answered without it.
    await response.text();
    const answeredIn = Date.now() - started;
    expect(response.status).toBe(200);
    releaseHook();
    const [record] = await waitForLogs(gateway, { trace_id: traceId }, 1, { timeoutMs: 5000 });
    expect(record.hook_results).toMatchObject({
      after_request_hooks: [{ id: 'audit', async: true, verdict: true }],
    });
    expect(record.latency_ms).toBeLessThanOrEqual(answeredIn);
  });
});
