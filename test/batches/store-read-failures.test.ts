/**
 * A read the store could not answer (a connection dropped) says nothing of a batch's line: the line is not
 * answered with the failure but given back and run again, as many times as the store keeps failing. Only what the store answers (a config deleted, a key revoked) is the line's
 * answer. The store here is a real SQLite file; its reads are made to fail on demand.
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
  fake = await startFakeOpenAI({ name: 'store-read-failures' });
  gateway = await startGateway({
    env: {
      GATEWAY_BATCH_POLL_MS: '50',
      GATEWAY_BATCH_LEASE_MS: '500',
      GATEWAY_BATCH_CONCURRENCY: '4',
      // Every call reads its stored config and credentials from the store.
      GATEWAY_LOOKUP_CACHE_TTL_MS: '0',
    },
  });
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

function connectionDropped(): Error {
  return Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
}

async function expectAllAnswered(batchId: string, customIds: string[]) {
  const admin = sdk(gateway.url, gateway.adminKey);
  const done = await waitFor(admin, batchId, finished);
  expect(done.status).toBe('completed');
  const errors = await contentLines(admin, done.error_file_id);
  expect(errors, JSON.stringify(errors)).toEqual([]);
  expect(done.request_counts).toEqual({ total: customIds.length, completed: customIds.length, failed: 0 });
  const output = await contentLines(admin, done.output_file_id);
  expect(output.map((line) => line.custom_id).sort()).toEqual([...customIds].sort());
}

it(
  'runs again the lines whose stored config the store could not read, rather than answer them with the failure',
  async () => {
    const slug = 'batch-config-read-fails';
    const stored = await call(gateway.url, gateway.adminKey, 'POST', '/configs', {
      slug,
      config: target(fake),
    });
    expect(stored.status, stored.text).toBe(200);
    const client = sdk(gateway.url, gateway.adminKey);
    const lines = Array.from({ length: 6 }, (_, i) => chatLine(`config-${i}`));
    const file = await upload(client, jsonl(lines));

    const { store } = gateway.server.deps;
    const getConfig = store.getConfig.bind(store);
    let failing = false;
    let failed = 0;
    const reads = vi.spyOn(store, 'getConfig').mockImplementation(async (workspaceId, slugOrId) => {
      // The first reads of the config for the batch's lines: the store dropped its connection.
      if (failing && slugOrId === slug && failed < 4) {
        failed++;
        throw connectionDropped();
      }
      return getConfig(workspaceId, slugOrId);
    });
    try {
      const batch = await createBatch(client, file.id, {}, { 'x-gateway-config': slug });
      // Once the batch is created (its request read the config): its lines' reads fail.
      failing = true;
      await expectAllAnswered(
        batch.id,
        lines.map((line) => line.custom_id),
      );
      expect(failed).toBe(4);
    } finally {
      reads.mockRestore();
    }
  },
  SLOW_TEST_MS,
);
