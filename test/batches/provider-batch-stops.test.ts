/**
 * A gateway node stopped (SIGTERM: `close`) in the middle of a provider batch's submission — waiting for
 * another node's upload of its input, sending that input itself, or asking the provider to create the
 * batch — hands the submission on without using up one of its attempts: a few deploys in a row do not
 * fail a batch that never failed. What the stopped node did is not done twice: the next node creates the
 * provider's batch once. Nodes share one store (a SQLite file, or a PostgreSQL schema) and one data
 * directory (the files' contents); the first only serves the API, the others run jobs and are stopped by
 * the tests.
 */
import { describe, expect, it } from 'vitest';
import { SUBMIT_JOB } from '../../src/gateway/provider-resources/provider-batches.js';
import { resourceTarget } from '../../src/gateway/provider-resources/resource-target.js';
import { describeWithPostgres } from '../helpers/postgres.js';
import { batchJob, stoppingNodes } from './stopping-nodes.js';
import { chatLine, finished, jsonl, sleep, SLOW_TEST_MS, until, upload, waitFor } from './support.js';

/** How long a test waits for what a node does under way. */
const UNTIL_MS = 20_000;

function stopsSuite(store: 'sqlite' | 'postgres') {
  const nodes = stoppingNodes(store, 'pb-stops');
  /** A node that runs jobs, and is given a short grace period when it stops. A transfer with nothing
   * moving is cut after 5 s (not a minute), so that a stop which waited for it would show. */
  const startWorker = () =>
    nodes.start({ GATEWAY_SHUTDOWN_GRACE_MS: '200', GATEWAY_FILE_TRANSFER_IDLE_TIMEOUT_MS: '5000' });

  const uploads = () => nodes.fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/files');
  const createsFor = (batchId: string) =>
    nodes.fake.requests.filter(
      (r) =>
        r.method === 'POST' &&
        r.path === '/v1/batches' &&
        (r.body as { metadata?: Record<string, string> }).metadata?.gateway_batch_id === batchId,
    );

  const submitJobOf = (batchId: string) => batchJob(nodes.front, SUBMIT_JOB, batchId);

  /** A node started after the stops completes the batch, the provider's batch created once for it. */
  async function completesOnNextNode(batchId: string): Promise<void> {
    const node = await startWorker();
    try {
      const done = await waitFor(nodes.client, batchId, finished, 30_000);
      expect(done.status, JSON.stringify(done.errors)).toBe('completed');
      expect(createsFor(batchId)).toHaveLength(1);
    } finally {
      await node.close();
    }
  }

  async function createBatch(name: string) {
    const input = await upload(
      nodes.client,
      jsonl([chatLine(`${name}-1`), chatLine(`${name}-2`)]),
      `${name}.jsonl`,
    );
    const batch = await nodes.client.batches.create({
      input_file_id: input.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    return { input, batch };
  }

  it(
    "a node that stops while its submission waits for another node's upload gives its attempt back, stop after stop",
    async () => {
      const { deps } = nodes.front.server;
      const { input, batch } = await createBatch('wait');
      const { max_attempts } = await submitJobOf(batch.id);
      // Another node is sending the input to the provider's account, and renews its claim while it does.
      const { account } = await resourceTarget(
        deps,
        { 'x-gateway-config': JSON.stringify(nodes.config) },
        (await deps.store.batches.getById(batch.id))!.workspace_id,
        'batches',
      );
      const claim = await deps.store.providerFiles.claim(input.id, account, 'openai', 10 * 60_000);
      if (claim.state !== 'claimed') throw new Error(`not claimed: ${claim.state}`);
      let held = claim.claimed_at_ms;
      // One renewal at a time, and the last awaited before the release below: a renewal still on its way
      // would otherwise move the claim on after the release read `held`, and the release would miss it.
      let renewal: Promise<unknown> | undefined;
      const renewing = setInterval(() => {
        renewal ??= deps.store.providerFiles
          .renew(input.id, account, held)
          .then((at) => (held = at ?? held))
          .finally(() => (renewal = undefined));
      }, 50);
      try {
        // More deploys than the submission has attempts, each while it waits.
        for (let stop = 0; stop <= max_attempts; stop++) {
          const node = await startWorker();
          await until(async () => (await submitJobOf(batch.id)).status === 'running', UNTIL_MS);
          await sleep(100);
          await node.close();
          expect(await submitJobOf(batch.id)).toMatchObject({ status: 'queued', attempts: 0 });
          expect((await nodes.client.batches.retrieve(batch.id)).status).toBe('validating');
        }
      } finally {
        clearInterval(renewing);
        await renewal;
      }
      // The other node's upload ends without an id (it stopped too): the next node sends the input itself.
      await deps.store.providerFiles.release(input.id, account, held);
      await completesOnNextNode(batch.id);
    },
    SLOW_TEST_MS,
  );

  it(
    'a node that stops while it sends the input cuts the upload at the end of its grace, and gives back the attempt and the upload',
    async () => {
      const { batch } = await createBatch('upload');
      // The provider takes the file and does not answer (the upload of a large file, still under way).
      const before = uploads().length;
      nodes.fake.enqueue({ hang: true });
      const node = await startWorker();
      await until(() => uploads().length > before, UNTIL_MS);
      const started = Date.now();
      await node.close();
      // Within its grace period, not when the upload would have ended (the transfer's idle timeout).
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(await submitJobOf(batch.id)).toMatchObject({ status: 'queued', attempts: 0 });
      expect((await nodes.client.batches.retrieve(batch.id)).status).toBe('validating');
      // The next node sends the file at once: the stopped node's claim on the upload was given back,
      // not left for the next one to wait out.
      await completesOnNextNode(batch.id);
      expect(uploads().length).toBe(before + 2);
    },
    SLOW_TEST_MS,
  );

  it(
    'a node that stops while the provider creates the batch waits for the answer and records it: one provider batch',
    async () => {
      const { batch } = await createBatch('create');
      let answer = () => undefined as void;
      nodes.fake.resources.holdBatchCreates = new Promise<void>((resolve) => (answer = resolve));
      const node = await startWorker();
      try {
        await until(() => createsFor(batch.id).length === 1, UNTIL_MS);
        const closed = node.close();
        await sleep(500); // past the grace period
        nodes.fake.resources.holdBatchCreates = undefined;
        answer();
        await closed;
      } finally {
        nodes.fake.resources.holdBatchCreates = undefined;
        answer();
      }
      expect(await submitJobOf(batch.id)).toMatchObject({ status: 'completed', attempts: 1 });
      expect(await nodes.front.server.deps.store.providerBatches.get(batch.id)).toBeDefined();
      await completesOnNextNode(batch.id);
    },
    SLOW_TEST_MS,
  );
}

describe('provider batches whose node stops mid-submission, over SQLite', () => {
  stopsSuite('sqlite');
});

describeWithPostgres('provider batches whose node stops mid-submission, over PostgreSQL', () => {
  stopsSuite('postgres');
});
