/**
 * A gateway node stopped (SIGTERM: `close`) while it validates a batch's input stops at the end of its
 * grace period and gives the validation back without using up one of its attempts: deploys in a row do
 * not fail a batch whose input is fine, and the next node adds the lines not yet stored, each once. Nodes
 * share one store (a SQLite file, or a PostgreSQL schema) and one data directory; the first only serves
 * the API.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VALIDATE_JOB } from '../../src/gateway/batches/batch-phases.js';
import type { Job } from '../../src/store/types.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type StartGatewayOptions, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import {
  chatLine,
  createBatch,
  jsonl,
  sdk,
  sleep,
  SLOW_TEST_MS,
  target,
  upload,
  waitFor,
} from './support.js';

/** Enough lines for a validation to be caught part way (it stores them 500 at a time). */
const LINES = 20_000;

function stopsSuite(store: 'sqlite' | 'postgres') {
  const shared: Record<string, string> = {
    GATEWAY_ADMIN_KEY: `gw-test-${randomBytes(16).toString('hex')}`,
    GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
    GATEWAY_BATCH_POLL_MS: '20',
  };
  let dataDir: string | undefined;
  let schema: string | undefined;
  let fake: FakeUpstream;
  let front: TestGateway;
  let client: OpenAI;

  function start(env: Record<string, string>): Promise<TestGateway> {
    const options: StartGatewayOptions =
      store === 'postgres'
        ? { postgres: { url: postgresUrl(), schema: (schema ??= freshSchemaName('validation_stops')) } }
        : {};
    dataDir ??= mkdtempSync(join(tmpdir(), 'gateway-validation-stops-'));
    return startGateway({ ...options, env: { ...shared, GATEWAY_DATA_DIR: dataDir, ...env } });
  }

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: `validation-stops-${store}` });
    front = await start({ GATEWAY_BATCH_WORKER: 'false' });
    client = sdk(front.url, shared.GATEWAY_ADMIN_KEY!, target(fake));
  });
  afterAll(async () => {
    await front?.close();
    await fake?.close();
    if (schema) await dropSchema(schema);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function validationOf(batchId: string): Promise<Job> {
    const { data } = await front.server.deps.store.jobs.list({ kind: VALIDATE_JOB, limit: 1_000 });
    const job = data.find((j) => (j.payload as { batch_id: string }).batch_id === batchId);
    if (!job) throw new Error(`no validation for ${batchId}`);
    return job;
  }

  it(
    'a node that stops part way through a validation gives it back with its attempt; the next stores the rest',
    async () => {
      const { batches } = front.server.deps.store;
      const lines = Array.from({ length: LINES }, (_, i) => chatLine(`line-${i}`));
      const input = await upload(client, jsonl(lines));
      const batch = await createBatch(client, input.id);
      const { max_attempts } = await validationOf(batch.id);
      let stops = 0;
      // More deploys than the validation has attempts, each with some of the lines stored.
      for (let stop = 0; stop <= max_attempts; stop++) {
        const stored = (await batches.lineCounts(batch.id)).total;
        const node = await start({ GATEWAY_SHUTDOWN_GRACE_MS: '0' });
        const deadline = Date.now() + 30_000;
        while ((await batches.lineCounts(batch.id)).total === stored && Date.now() < deadline) {
          await sleep(5);
        }
        await node.close();
        if ((await client.batches.retrieve(batch.id)).status !== 'validating') break;
        stops += 1;
        expect(await validationOf(batch.id)).toMatchObject({ status: 'queued', attempts: 0 });
      }
      // Each stop caught it part way (the lines are enough for that).
      expect(stops).toBeGreaterThan(max_attempts);
      const node = await start({});
      try {
        const started = await waitFor(client, batch.id, (b) => b.status !== 'validating', 60_000);
        expect(started.status, JSON.stringify(started.errors)).toBe('in_progress');
        expect(started.request_counts?.total).toBe(LINES);
        await client.batches.cancel(batch.id);
        expect(await validationOf(batch.id)).toMatchObject({ status: 'completed', attempts: 1 });
      } finally {
        await node.close();
      }
    },
    SLOW_TEST_MS,
  );
}

describe('a managed batch whose node stops while validating it, over SQLite', () => {
  stopsSuite('sqlite');
});

describeWithPostgres('a managed batch whose node stops while validating it, over PostgreSQL', () => {
  stopsSuite('postgres');
});
