/**
 * Two gateway nodes on one PostgreSQL store and one S3-compatible bucket share one batch: both claim its
 * lines (SKIP LOCKED leases), every line is answered once, and the output is whole and in input order.
 * A step of the test's own in each node's chain counts the calls that node made.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_TARGET_STEPS, type TargetStep } from '../../src/gateway/steps/index.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
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

const LINES = 400;

function counting(counter: { calls: number }): TargetStep {
  return (next) => async (call) => {
    counter.calls += 1;
    return next(call);
  };
}

describeWithPostgres('two nodes on PostgreSQL share one batch', () => {
  const schema = freshSchemaName('batches_shared');
  const counts = { a: { calls: 0 }, b: { calls: 0 } };
  let nodeA: TestGateway;
  let nodeB: TestGateway;
  let upstream: FakeUpstream;
  let s3: TestS3;

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ name: 'shared', latencyMs: 10 });
    s3 = await startS3();
    const env = {
      ...s3.env,
      GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
      GATEWAY_BATCH_POLL_MS: '50',
      GATEWAY_BATCH_CONCURRENCY: '8',
    };
    const postgres = { url: postgresUrl(), schema };
    nodeA = await startGateway({ env, postgres, targetSteps: [...DEFAULT_TARGET_STEPS, counting(counts.a)] });
    nodeB = await startGateway({ env, postgres, targetSteps: [...DEFAULT_TARGET_STEPS, counting(counts.b)] });
  });

  afterAll(async () => {
    await nodeA?.close();
    await nodeB?.close();
    await upstream?.close();
    await s3?.close();
    await dropSchema(schema);
  });

  it(
    'answers every line once, with both nodes working',
    async () => {
      const client = sdk(nodeA.url, nodeA.adminKey, target(upstream));
      const lines = Array.from({ length: LINES }, (_, i) => chatLine(`shared-${i}`));
      const file = await upload(client, jsonl(lines));
      const created = await createBatch(client, file.id);
      // Read from the other node: the batch, its counts and its files are the store's, not a node's.
      const reader = sdk(nodeB.url, nodeB.adminKey);
      const batch = await waitFor(reader, created.id, finished, SLOW_TEST_MS - 10_000);
      expect(batch.status).toBe('completed');
      expect(batch.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });

      const output = await contentLines(reader, batch.output_file_id);
      expect(output.map((line) => line.custom_id)).toEqual(lines.map((line) => line.custom_id));
      expect(upstream.requests.length).toBe(LINES);
      expect(counts.a.calls + counts.b.calls).toBe(LINES);
      expect(counts.a.calls).toBeGreaterThan(0);
      expect(counts.b.calls).toBeGreaterThan(0);
    },
    SLOW_TEST_MS,
  );

  it(
    'answers cancels sent to both nodes at once each with the batch cancelling, none with 409',
    async () => {
      const [a, b] = [nodeA, nodeB].map((node) => sdk(node.url, node.adminKey, target(upstream)));
      const lines = Array.from({ length: LINES }, (_, i) => chatLine(`cancel-${i}`));
      const file = await upload(a, jsonl(lines));
      const batches = await Promise.all([1, 2, 3].map(() => createBatch(a, file.id, { concurrency: 1 })));
      for (const batch of batches) await waitFor(a, batch.id, (seen) => seen.status === 'in_progress');
      // Clients retrying their cancels through either node: each is told the batch is cancelling.
      const answers = await Promise.allSettled(
        batches.flatMap((batch) =>
          Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? a : b).batches.cancel(batch.id)),
        ),
      );
      const seen = answers.map((answer) =>
        answer.status === 'fulfilled' ? answer.value.status : String(answer.reason),
      );
      expect(seen).toEqual(Array(48).fill('cancelling'));
      for (const batch of batches) {
        expect((await waitFor(b, batch.id, finished, SLOW_TEST_MS - 10_000)).status).toBe('cancelled');
      }
    },
    SLOW_TEST_MS,
  );

  it('reports a custom_id holding U+0000, which PostgreSQL cannot keep, as an invalid line', async () => {
    const client = sdk(nodeA.url, nodeA.adminKey, target(upstream));
    const file = await upload(client, jsonl([chatLine('fine'), { ...chatLine('x'), custom_id: 'a\u0000b' }]));
    const batch = await waitFor(client, (await createBatch(client, file.id)).id, finished);
    expect(batch.status).toBe('failed');
    expect(batch.errors?.data).toEqual([
      { code: 'invalid_request', message: expect.any(String), param: 'custom_id', line: 2 },
    ]);
  });
});
