/**
 * A provider batch whose provider cannot be reached for a while (its reads answer 503): the batch may
 * still run there and finish, so the gateway polls on, the row left as it was last seen, well past the
 * attempts a poll that fails otherwise gets, and copies the output once the provider answers again. Only a
 * day after the batch's completion window ended does it fail, saying since when the provider could not be
 * reached. A batch the provider says it does not know (404) fails after its attempts, as before. Polls are
 * 10 to 20 ms apart here (GATEWAY_BATCH_POLL_MS, GATEWAY_BATCH_POLL_MAX_MS).
 */
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  chatLine,
  contentLines,
  finished,
  jsonl,
  sdk,
  SLOW_TEST_MS,
  target,
  upload,
  waitFor,
} from './support.js';

const UNAVAILABLE = {
  status: 503,
  body: { error: { message: 'The server is overloaded', type: 'server_error', param: null, code: null } },
};

describe('provider batches while their provider cannot be reached', () => {
  let fake: FakeUpstream;
  let gateway: TestGateway;
  let client: OpenAI;
  const batchReads = () =>
    fake.requests.filter((r) => r.method === 'GET' && /^\/v1\/batches\/./.test(r.path));

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'outage' });
    gateway = await startGateway({
      env: { GATEWAY_BATCH_POLL_MS: '10', GATEWAY_BATCH_POLL_MAX_MS: '20' },
    });
    client = sdk(gateway.url, gateway.adminKey, target(fake));
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  /** A 24h batch of one line `name`, once the provider has it. */
  async function unreadBatch(name: string): Promise<OpenAI.Batches.Batch> {
    const input = await upload(client, jsonl([chatLine(name)]));
    const batch = await client.batches.create({
      input_file_id: input.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const deadline = Date.now() + 30_000;
    const atProvider = () =>
      [...fake.resources.batches.values()].find((b) =>
        [...fake.resources.files.values()].some(
          (f) => f.id === b.input_file_id && f.content.includes(`"${name}"`),
        ),
      );
    while (!atProvider()) {
      if (Date.now() > deadline) throw new Error('the batch never reached the provider');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return batch;
  }

  async function pollsReach(count: number): Promise<void> {
    const from = batchReads().length;
    const deadline = Date.now() + 30_000;
    while (batchReads().length - from < count) {
      if (Date.now() > deadline) throw new Error(`only ${batchReads().length - from} polls`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it(
    'polls on through an outage longer than its attempts, keeping the row, and copies the output after it',
    async () => {
      fake.resources.batchReads = UNAVAILABLE;
      let batch: OpenAI.Batches.Batch;
      try {
        batch = await unreadBatch('through');
        await pollsReach(30);
        const during = await client.batches.retrieve(batch.id);
        expect(during.status).toBe('validating');
        expect(during.errors ?? null).toBeNull();
      } finally {
        fake.resources.batchReads = undefined;
      }
      const done = await waitFor(client, batch.id, finished, 30_000);
      expect(done.status).toBe('completed');
      const lines = await contentLines(client, done.output_file_id);
      expect(lines.map((line) => line.custom_id)).toEqual(['through']);
    },
    SLOW_TEST_MS,
  );

  it(
    "fails a day after the batch's completion window ended, saying since when the provider could not be reached",
    async () => {
      fake.resources.batchReads = UNAVAILABLE;
      try {
        const before = new Date();
        const batch = await unreadBatch('never-back');
        await pollsReach(25);
        expect((await client.batches.retrieve(batch.id)).status).toBe('validating');
        // The window ended a little more than a day ago.
        const expiresAt = Math.floor(Date.now() / 1000) - 24 * 60 * 60 - 60;
        await gateway.server.deps.store.batches.update(batch.id, { expires_at: expiresAt });
        const done = await waitFor(client, batch.id, finished, 30_000);
        expect(done.status).toBe('failed');
        const [error] = done.errors?.data ?? [];
        expect(error?.code).toBe('provider_unreachable');
        const since = /could not be reached since (\S+) /.exec(error?.message ?? '')?.[1];
        expect(since, error?.message).toBeDefined();
        expect(Date.parse(since!)).toBeGreaterThanOrEqual(before.getTime() - 1000);
        expect(Date.parse(since!)).toBeLessThan(Date.now() - 100);
      } finally {
        fake.resources.batchReads = undefined;
      }
    },
    SLOW_TEST_MS,
  );

  it(
    'fails a batch the provider does not know after its attempts, as a definitive answer',
    async () => {
      fake.resources.batchReads = {
        status: 404,
        body: {
          error: { message: 'No batch found', type: 'invalid_request_error', param: null, code: null },
        },
      };
      try {
        const batch = await unreadBatch('unknown');
        const done = await waitFor(client, batch.id, finished, 30_000);
        expect(done.status).toBe('failed');
        expect(done.errors?.data?.[0]?.code).toBe('provider_unreachable');
        expect(done.errors?.data?.[0]?.message).toContain('No batch found');
      } finally {
        fake.resources.batchReads = undefined;
      }
    },
    SLOW_TEST_MS,
  );
});
