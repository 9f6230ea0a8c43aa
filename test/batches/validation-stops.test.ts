/**
 * A gateway node stopped (SIGTERM: `close`) while it validates a batch's input stops at the end of its
 * grace period and gives the validation back without using up one of its attempts: deploys in a row do
 * not fail a batch whose input is fine, and the next node adds the lines not yet stored, each once. Nodes
 * share one store (a SQLite file, or a PostgreSQL schema) and one data directory; the first only serves
 * the API.
 */
import { describe, expect, it } from 'vitest';
import { VALIDATE_JOB } from '../../src/gateway/batches/batch-phases.js';
import { describeWithPostgres } from '../helpers/postgres.js';
import { batchJob, stoppingNodes } from './stopping-nodes.js';
import { chatLine, createBatch, jsonl, SLOW_TEST_MS, until, upload, waitFor } from './support.js';

/** Enough lines for a validation to be caught part way (it stores them 500 at a time). */
const LINES = 20_000;

function stopsSuite(store: 'sqlite' | 'postgres') {
  const nodes = stoppingNodes(store, 'validation-stops');
  const validationOf = (batchId: string) => batchJob(nodes.front, VALIDATE_JOB, batchId);

  it(
    'a node that stops part way through a validation gives it back with its attempt; the next stores the rest',
    async () => {
      const { batches } = nodes.front.server.deps.store;
      const lines = Array.from({ length: LINES }, (_, i) => chatLine(`line-${i}`));
      const input = await upload(nodes.client, jsonl(lines));
      const batch = await createBatch(nodes.client, input.id);
      const { max_attempts } = await validationOf(batch.id);
      let stops = 0;
      // More deploys than the validation has attempts, each with some of the lines stored.
      for (let stop = 0; stop <= max_attempts; stop++) {
        const stored = (await batches.lineCounts(batch.id)).total;
        const node = await nodes.start({ GATEWAY_SHUTDOWN_GRACE_MS: '0' });
        try {
          await until(async () => (await batches.lineCounts(batch.id)).total !== stored, 30_000);
        } finally {
          await node.close();
        }
        if ((await nodes.client.batches.retrieve(batch.id)).status !== 'validating') break;
        stops += 1;
        expect(await validationOf(batch.id)).toMatchObject({ status: 'queued', attempts: 0 });
      }
      // Each stop caught it part way (the lines are enough for that).
      expect(stops).toBeGreaterThan(max_attempts);
      const node = await nodes.start();
      try {
        const started = await waitFor(nodes.client, batch.id, (b) => b.status !== 'validating', 60_000);
        expect(started.status, JSON.stringify(started.errors)).toBe('in_progress');
        expect(started.request_counts?.total).toBe(LINES);
        await nodes.client.batches.cancel(batch.id);
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
