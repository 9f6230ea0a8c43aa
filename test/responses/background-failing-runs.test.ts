/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
/**
 * A background response whose run fails before its call every time (the store failing each read of its
 * config, or a fault of the gateway's there) runs again, a few seconds apart, for as long as the worker's
 * retry bound (`retryForMs`, ten minutes by default; two seconds here): then it is failed with
 * `server_error`, rather than run for ever. The store here is a real SQLite file; its reads of the
 * response's stored config are made to fail on demand.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { call } from '../management/http.js';

const RETRY_FOR_MS = 2000;

let upstream: FakeUpstream;
let gateway: TestGateway;

beforeAll(async () => {
  upstream = await startFakeOpenAI({ name: 'bg-failing-runs' });
  gateway = await startGateway({
    env: {
      GATEWAY_BATCH_POLL_MS: '50',
      GATEWAY_BATCH_LEASE_MS: '120000',
      // Every run reads its stored config from the store.
      GATEWAY_LOOKUP_CACHE_TTL_MS: '0',
    },
    jobRetryForMs: RETRY_FOR_MS,
  });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

it('fails a response whose runs failed before their call each time, once that has gone on for the bound', async () => {
  const slug = 'bg-config-read-always-fails';
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
    // The run's reads fail, the same way each time (the request that queued it read the config too).
    const byTheRun = new Error().stack?.includes('background-worker') === true;
    if (byTheRun && slugOrId === slug) {
      failed++;
      throw new TypeError("Cannot read properties of undefined (reading 'config')");
    }
    return getConfig(workspaceId, slugOrId);
  });
  try {
    const started = Date.now();
    const response: any = await client.responses.create({ model: 'gpt-4o', input: 'Hi', background: true });
    const done = await ended(response.id);
    expect(Date.now() - started).toBeGreaterThanOrEqual(RETRY_FOR_MS);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'server_error' });
    expect(done.error.message).toContain('could not be run');
    expect(failed).toBeGreaterThan(3);
    expect(upstream.requests.length).toBe(0);
  } finally {
    reads.mockRestore();
  }
});
