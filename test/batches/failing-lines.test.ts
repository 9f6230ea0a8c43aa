/**
 * A batch line that fails before its call every time it runs (the store failing each read of it, or a
 * fault of the gateway's there) is run again, a few seconds apart, for as long as the worker's retry bound
 * (`retryForMs`, ten minutes by default; two seconds here): then it is answered with the failure, a 500
 * in the batch's error file, rather than run for ever. The store here is a real SQLite file; its reads of
 * the batch's stored config are made to fail on demand.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../management/http.js';
import {
  chatLine,
  contentLines,
  createBatch,
  finished,
  jsonl,
  sdk,
  target,
  upload,
  waitFor,
  SLOW_TEST_MS,
} from './support.js';

const RETRY_FOR_MS = 2000;

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'failing-lines' });
  gateway = await startGateway({
    env: {
      GATEWAY_BATCH_POLL_MS: '50',
      GATEWAY_BATCH_LEASE_MS: '5000',
      // Every call reads its stored config from the store.
      GATEWAY_LOOKUP_CACHE_TTL_MS: '0',
    },
    jobRetryForMs: RETRY_FOR_MS,
  });
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

it(
  'answers with a 500 a line that failed before its call each time, once that has gone on for the bound',
  async () => {
    const slug = 'batch-config-read-always-fails';
    const stored = await call(gateway.url, gateway.adminKey, 'POST', '/configs', {
      slug,
      config: target(fake),
    });
    expect(stored.status, stored.text).toBe(200);
    const client = sdk(gateway.url, gateway.adminKey);
    const file = await upload(client, jsonl([chatLine('never-0'), chatLine('never-1')]));

    const { store } = gateway.server.deps;
    const getConfig = store.getConfig.bind(store);
    let failing = false;
    let failed = 0;
    const reads = vi.spyOn(store, 'getConfig').mockImplementation(async (workspaceId, slugOrId) => {
      // A fault of the gateway's as the lines' config is read: the same each time.
      if (failing && slugOrId === slug) {
        failed++;
        throw new TypeError("Cannot read properties of undefined (reading 'config')");
      }
      return getConfig(workspaceId, slugOrId);
    });
    try {
      const batch = await createBatch(client, file.id, {}, { 'x-gateway-config': slug });
      failing = true;
      const started = Date.now();
      const admin = sdk(gateway.url, gateway.adminKey);
      const done = await waitFor(admin, batch.id, finished, 30_000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(RETRY_FOR_MS);
      expect(done.request_counts).toEqual({ total: 2, completed: 0, failed: 2 });
      const errors = await contentLines(admin, done.error_file_id);
      expect(
        errors.map((line) => [line.custom_id, line.response?.status_code, line.error?.code]).sort(),
      ).toEqual([
        ['never-0', 500, 'internal_error'],
        ['never-1', 500, 'internal_error'],
      ]);
      // Run again meanwhile, more than once each.
      expect(failed).toBeGreaterThan(4);
      expect(fake.requests.length).toBe(0);
    } finally {
      reads.mockRestore();
    }
  },
  SLOW_TEST_MS,
);
