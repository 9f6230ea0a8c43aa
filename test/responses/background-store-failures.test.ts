/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
/**
 * A background response's run reads, before its call, the API key that created it and the stored config it
 * names. A read the store could not answer (a connection dropped) says nothing of the response: it is not
 * failed with it, nor does it spend one of its runs, but runs again shortly, as many times as the store
 * keeps failing. The store here is a real SQLite file; its reads are made to fail on demand.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { call } from '../management/http.js';

let upstream: FakeUpstream;
let gateway: TestGateway;

beforeAll(async () => {
  upstream = await startFakeOpenAI({ name: 'bg-store-failures' });
  gateway = await startGateway({
    env: {
      GATEWAY_BATCH_POLL_MS: '50',
      // Far longer than the test waits: a run given back only when its lease runs out never comes.
      GATEWAY_BATCH_LEASE_MS: '120000',
      // Every run reads its stored config from the store.
      GATEWAY_LOOKUP_CACHE_TTL_MS: '0',
    },
  });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function connectionDropped(): Error {
  return Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
}

async function ended(id: string): Promise<any> {
  const admin = gatewayOpenAI(gateway, {});
  const deadline = Date.now() + 30_000;
  for (;;) {
    const response: any = await admin.responses.retrieve(id);
    if (!['queued', 'in_progress'].includes(response.status)) return response;
    if (Date.now() > deadline) throw new Error(`response ${id} is still ${response.status}`);
    await sleep(20);
  }
}

it('runs again, not failed, a response whose key the store could not read, however many times', async () => {
  const created = await call(gateway.url, gateway.adminKey, 'POST', '/api-keys', {
    name: 'bg-key-read-fails',
    role: 'member',
  });
  expect(created.status, created.text).toBe(200);
  const key = created.body as { id: string; key: string };
  const client = gatewayOpenAI(
    gateway,
    { provider: 'openai', api_key: 'sk-bg', custom_host: upstream.url },
    { 'x-gateway-api-key': key.key },
  );
  const { store } = gateway.server.deps;
  const getApiKey = store.getApiKey.bind(store);
  let failed = 0;
  // More failures than a response has runs (BACKGROUND_RUNS): none of them is one.
  const reads = vi.spyOn(store, 'getApiKey').mockImplementation(async (workspaceId, id) => {
    if (id === key.id && failed < 4) {
      failed++;
      throw connectionDropped();
    }
    return getApiKey(workspaceId, id);
  });
  try {
    const response: any = await client.responses.create({ model: 'gpt-4o', input: 'Hi', background: true });
    const done = await ended(response.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(failed).toBe(4);
  } finally {
    reads.mockRestore();
  }
});

it('runs again, not failed, a response whose stored config the store could not read', async () => {
  const slug = 'bg-config-read-fails';
  const stored = await call(gateway.url, gateway.adminKey, 'POST', '/configs', {
    slug,
    config: { provider: 'openai', api_key: 'sk-bg', custom_host: upstream.url },
  });
  expect(stored.status, stored.text).toBe(200);
  const client = gatewayOpenAI(gateway, {}, { 'x-gateway-config': slug });
  const { store } = gateway.server.deps;
  const getConfig = store.getConfig.bind(store);
  let failed = 0;
  const reads = vi.spyOn(store, 'getConfig').mockImplementation(async (workspaceId, slugOrId) => {
    // The run's reads fail (the request that queued it read the config too, and was answered).
    const byTheRun = new Error().stack?.includes('background-worker') === true;
    if (byTheRun && slugOrId === slug && failed < 3) {
      failed++;
      throw connectionDropped();
    }
    return getConfig(workspaceId, slugOrId);
  });
  try {
    const response: any = await client.responses.create({ model: 'gpt-4o', input: 'Hi', background: true });
    const done = await ended(response.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(failed).toBe(3);
  } finally {
    reads.mockRestore();
  }
});
