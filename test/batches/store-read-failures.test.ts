/**
 * A read the store could not answer (a connection dropped) says nothing of a batch's line: the line is not
 * answered with the failure but given back and run again, soon (well within its lease), as many times as
 * the store keeps failing. Only what the store answers (a config deleted, a key revoked) is the line's
 * answer. The store here is a real SQLite file; its reads are made to fail on demand.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { findAdapter } from '../../src/providers/registry.js';
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
/** A gateway whose lines' leases outlast the test: a line given back only when its lease runs out is
 * never run again in it. */
let longLease: TestGateway;
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
  longLease = await startGateway({
    env: { GATEWAY_BATCH_POLL_MS: '50', GATEWAY_BATCH_LEASE_MS: '120000', GATEWAY_BATCH_CONCURRENCY: '4' },
  });
});

afterAll(async () => {
  await gateway?.close();
  await longLease?.close();
  await fake?.close();
});

function connectionDropped(): Error {
  return Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
}

async function expectAllAnswered(on: TestGateway, batchId: string, customIds: string[]) {
  const admin = sdk(on.url, on.adminKey);
  // Well within a lease (longLease's): the lines given back are run again at once.
  const done = await waitFor(admin, batchId, finished, 30_000);
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
        gateway,
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

it(
  'runs again soon, not once their lease has run out, the lines whose read of the key the store failed',
  async () => {
    const created = await call(longLease.url, longLease.adminKey, 'POST', '/api-keys', {
      name: 'batch-key-read-fails-long-lease',
      role: 'member',
    });
    expect(created.status, created.text).toBe(200);
    const key = created.body as { id: string; key: string };
    const client = sdk(longLease.url, key.key, target(fake));
    const lines = Array.from({ length: 6 }, (_, i) => chatLine(`key-${i}`));
    const file = await upload(client, jsonl(lines));

    const { store } = longLease.server.deps;
    const getApiKey = store.getApiKey.bind(store);
    let failed = 0;
    const reads = vi.spyOn(store, 'getApiKey').mockImplementation(async (workspaceId, id) => {
      // The batch's first three reads of its key: the store dropped its connection each time.
      if (id === key.id && failed < 3) {
        failed++;
        throw connectionDropped();
      }
      return getApiKey(workspaceId, id);
    });
    try {
      const batch = await createBatch(client, file.id);
      await expectAllAnswered(
        longLease,
        batch.id,
        lines.map((line) => line.custom_id),
      );
      expect(failed).toBe(3);
    } finally {
      reads.mockRestore();
    }
  },
  SLOW_TEST_MS,
);

it(
  'runs again the lines whose virtual key the store could not read as their call was routed',
  async () => {
    const slug = 'batch-vk-read-fails';
    const created = await call(gateway.url, gateway.adminKey, 'POST', '/virtual-keys', {
      slug,
      provider: 'openai',
      api_key: 'sk-test',
      custom_host: fake.url,
    });
    expect(created.status, created.text).toBe(200);
    const client = sdk(gateway.url, gateway.adminKey);
    const lines = Array.from({ length: 6 }, (_, i) => chatLine(`vk-${i}`));
    const file = await upload(client, jsonl(lines));

    const { store } = gateway.server.deps;
    const getCredential = store.getCredential.bind(store);
    let failing = false;
    let failed = 0;
    const reads = vi.spyOn(store, 'getCredential').mockImplementation(async (workspaceId, kind, name) => {
      if (failing && name === slug && failed < 4) {
        failed++;
        throw connectionDropped();
      }
      return getCredential(workspaceId, kind, name);
    });
    try {
      const batch = await createBatch(client, file.id, {}, { 'x-gateway-virtual-key': slug });
      // Once the batch is created (its request read the virtual key): its lines' reads fail.
      failing = true;
      await expectAllAnswered(
        gateway,
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

it(
  'answers a line with the failure once the gateway has failed its call five times on the node',
  async () => {
    const slug = 'batch-vk-read-always-fails';
    const created = await call(gateway.url, gateway.adminKey, 'POST', '/virtual-keys', {
      slug,
      provider: 'openai',
      api_key: 'sk-test',
      custom_host: fake.url,
    });
    expect(created.status, created.text).toBe(200);
    const client = sdk(gateway.url, gateway.adminKey);
    const file = await upload(client, jsonl([chatLine('always-0')]));

    const { store } = gateway.server.deps;
    const getCredential = store.getCredential.bind(store);
    let failing = false;
    let failed = 0;
    const reads = vi.spyOn(store, 'getCredential').mockImplementation(async (workspaceId, kind, name) => {
      if (failing && name === slug) {
        failed++;
        throw connectionDropped();
      }
      return getCredential(workspaceId, kind, name);
    });
    try {
      const batch = await createBatch(client, file.id, {}, { 'x-gateway-virtual-key': slug });
      failing = true;
      const admin = sdk(gateway.url, gateway.adminKey);
      const done = await waitFor(admin, batch.id, finished, 30_000);
      expect(done.request_counts).toEqual({ total: 1, completed: 0, failed: 1 });
      const errors = await contentLines(admin, done.error_file_id);
      expect(errors.map((line) => [line.custom_id, line.response?.status_code, line.error?.code])).toEqual([
        ['always-0', 500, 'internal_error'],
      ]);
      // Run five times again after the first, then answered.
      expect(failed).toBe(6);
    } finally {
      reads.mockRestore();
    }
  },
  SLOW_TEST_MS,
);

it(
  'answers at once, calling its provider once, a line whose call the gateway failed after the provider answered',
  async () => {
    const client = sdk(gateway.url, gateway.adminKey, target(fake));
    const customId = 'translation-fault-0';
    const file = await upload(client, jsonl([chatLine(customId)]));
    const chat = findAdapter('openai')!.operations.chat!;
    const parseResponse = chat.parseResponse.bind(chat);
    // The provider's answer, once it came, could not be translated: a fault of the gateway's.
    const translations = vi.spyOn(chat, 'parseResponse').mockImplementation((req, res) => {
      const { messages } = req.body as { messages?: Array<{ content?: unknown }> };
      if (messages?.[0]?.content === customId) throw new TypeError('Cannot read properties of undefined');
      return parseResponse(req, res);
    });
    const callsOfLine = () =>
      fake.requests.filter(
        (request) =>
          (request.body as { messages?: Array<{ content?: unknown }> } | undefined)?.messages?.[0]
            ?.content === customId,
      ).length;
    try {
      const batch = await createBatch(client, file.id);
      const admin = sdk(gateway.url, gateway.adminKey);
      const done = await waitFor(admin, batch.id, finished, 30_000);
      expect(done.request_counts).toEqual({ total: 1, completed: 0, failed: 1 });
      const errors = await contentLines(admin, done.error_file_id);
      expect(errors.map((line) => [line.custom_id, line.response?.status_code, line.error?.code])).toEqual([
        [customId, 500, 'internal_error'],
      ]);
      expect(callsOfLine()).toBe(1);
    } finally {
      translations.mockRestore();
    }
  },
  SLOW_TEST_MS,
);
