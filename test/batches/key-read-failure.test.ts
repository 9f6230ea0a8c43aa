/**
 * A batch's lines share the read of its API key (at most one a second a batch). A read the store could not
 * answer (a connection dropped) says nothing of the key: the lines that waited on it are not answered for
 * it, but given back and run again, as a line whose batch could not be read is.
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

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'key-read-failure' });
  gateway = await startGateway({
    env: { GATEWAY_BATCH_POLL_MS: '50', GATEWAY_BATCH_LEASE_MS: '500', GATEWAY_BATCH_CONCURRENCY: '4' },
  });
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

it(
  'runs again the lines whose shared read of the key failed, rather than answer them with the failure',
  async () => {
    const created = await call(gateway.url, gateway.adminKey, 'POST', '/api-keys', {
      name: 'batch-key-read-fails',
      role: 'member',
    });
    expect(created.status, created.text).toBe(200);
    const key = created.body as { id: string; key: string };
    const client = sdk(gateway.url, key.key, target(fake));
    const lines = Array.from({ length: 8 }, (_, i) => chatLine(`line-${i}`));
    const file = await upload(client, jsonl(lines));

    const { store } = gateway.server.deps;
    const getApiKey = store.getApiKey.bind(store);
    let failed = 0;
    const reads = vi.spyOn(store, 'getApiKey').mockImplementation(async (workspaceId, id) => {
      // The first read of the batch's key: the store dropped its connection, after a moment in which the
      // first lines started on it.
      if (id === key.id && failed++ === 0) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        throw new Error('Connection terminated unexpectedly');
      }
      return getApiKey(workspaceId, id);
    });
    try {
      const batch = await createBatch(client, file.id);
      const done = await waitFor(sdk(gateway.url, gateway.adminKey), batch.id, finished);
      expect(failed).toBeGreaterThan(1);
      expect(done.status).toBe('completed');
      expect(done.request_counts).toEqual({ total: lines.length, completed: lines.length, failed: 0 });
      const output = await contentLines(sdk(gateway.url, gateway.adminKey), done.output_file_id);
      expect(output.map((line) => line.custom_id).sort()).toEqual(lines.map((line) => line.custom_id).sort());
    } finally {
      reads.mockRestore();
    }
  },
  SLOW_TEST_MS,
);
