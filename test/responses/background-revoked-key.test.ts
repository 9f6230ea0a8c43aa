/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
/**
 * A background response runs as the API key that created it: revoked before the response runs, the key
 * makes no call, and the response fails saying so. A rate-limit policy holds the response
 * queued (its clock standing still) while the key is revoked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { call } from '../management/http.js';

let upstream: FakeUpstream;
let gateway: TestGateway;
let now = Date.now();

beforeAll(async () => {
  upstream = await startFakeOpenAI({ name: 'bg-revoked' });
  gateway = await startGateway({ rateLimitClock: () => now });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a background response whose API key is revoked before it runs', () => {
  it('makes no call and fails, saying the key was revoked', async () => {
    const created = await call(gateway.url, gateway.adminKey, 'POST', '/api-keys', {
      name: 'bg-revoked',
      role: 'member',
    });
    expect(created.status, created.text).toBe(200);
    const key = created.body as { id: string; key: string };
    const policy = await call(gateway.url, gateway.adminKey, 'POST', '/policies/rate-limits', {
      conditions: [{ key: 'metadata.case', value: 'bg-revoked' }],
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpm',
      value: 60,
    });
    expect(policy.status, policy.text).toBe(200);
    const client = gatewayOpenAI(
      gateway,
      { provider: 'openai', api_key: 'sk-bg', custom_host: upstream.url },
      { 'x-gateway-api-key': key.key, 'x-gateway-metadata': JSON.stringify({ case: 'bg-revoked' }) },
    );
    // The minute's 60 requests, taken in the foreground: the background one waits queued a second for the
    // next.
    for (let i = 0; i < 60; i++) {
      await client.chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: `${i}` }],
      });
    }
    const response: any = await client.responses.create({
      model: 'gpt-4o',
      input: 'Later',
      background: true,
    });
    // Refused at its run: queued again on a job of its own, for the policy's window.
    const jobsOfIt = async () => {
      const jobs = await gateway.server.deps.store.jobs.list({ kind: 'response.background' });
      return jobs.data.filter((job) => (job.payload as any).response_id === response.id).length;
    };
    for (let i = 0; i < 250 && (await jobsOfIt()) < 2; i++) await sleep(20);
    expect(await jobsOfIt()).toBe(2);
    const revoked = await call(gateway.url, gateway.adminKey, 'POST', `/api-keys/${key.id}/revoke`);
    expect(revoked.status, revoked.text).toBe(200);
    now += 1_000;

    const admin = gatewayOpenAI(gateway, {});
    let ended: any;
    for (let i = 0; i < 500; i++) {
      ended = await admin.responses.retrieve(response.id);
      if (!['queued', 'in_progress'].includes(ended.status)) break;
      await sleep(20);
    }
    expect(ended.status).toBe('failed');
    // A Response's error code is one of the document's (ResponseErrorCode), which has none for this: the
    // message says it.
    expect(ended.error?.code).toBe('server_error');
    expect(ended.error?.message).toMatch(/API key .* revoked/);
    expect(upstream.requests.filter((request) => request.path === '/v1/responses')).toHaveLength(0);
  });
});
