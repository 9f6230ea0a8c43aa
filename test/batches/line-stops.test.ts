/**
 * A node stopped (SIGTERM: `close`) while it calls a managed batch's lines cuts those calls at its grace
 * period's cut and gives the lines back; the next node runs them. Each line's outcome is in the output or
 * error file once and counted once; the log keeps the cut call as records of a call that was made (its
 * own, marked an attempt of the line, and its attempt's under it), beside the line's answered call, as a
 * retried call's attempts are kept. Every record's parent span has a record.
 */
import { describe, expect, it } from 'vitest';
import { call } from '../management/http.js';
import { stoppingNodes } from './stopping-nodes.js';
import {
  chatLine,
  contentLines,
  createBatch,
  finished,
  jsonl,
  SLOW_TEST_MS,
  until,
  upload,
  waitFor,
} from './support.js';

const LINES = 6;

interface LineRecord {
  status: number;
  is_attempt: boolean;
  span_id: string;
  parent_span_id: string | null;
  metadata: Record<string, string>;
}

describe('a managed batch whose node stops while it calls lines', () => {
  const nodes = stoppingNodes('sqlite', 'line-stops');

  it(
    "has each cut line's outcome once in its files and counts, and the cut attempt in the log",
    async () => {
      const { client, fake } = nodes;
      const lines = Array.from({ length: LINES }, (_, i) => chatLine(`cut-${i}`));
      const input = await upload(client, jsonl(lines));
      const batch = await createBatch(client, input.id, { concurrency: 2 });
      // The first node's calls hang until its stop cuts them.
      fake.enqueue({ hang: true }, { hang: true });
      const slow = await nodes.start({ GATEWAY_SHUTDOWN_GRACE_MS: '500' });
      await until(() => fake.requests.filter((r) => r.path === '/v1/chat/completions').length >= 2, 30_000);
      await slow.close();
      expect((await client.batches.retrieve(batch.id)).request_counts?.completed).toBe(0);

      const next = await nodes.start();
      try {
        const done = await waitFor(client, batch.id, finished, 60_000);
        expect(done.status).toBe('completed');
        expect(done.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
        const output = await contentLines(client, done.output_file_id);
        expect(output.map((line) => line.custom_id)).toEqual(lines.map((line) => line.custom_id));
        expect(await contentLines(client, done.error_file_id)).toEqual([]);
        // A record is written a moment after its line's answer is committed.
        let records: LineRecord[] = [];
        await until(async () => {
          const logs = await call(
            nodes.front.url,
            nodes.front.adminKey,
            'GET',
            `/logs?metadata.batch_id=${batch.id}&limit=100`,
          );
          records = (logs.body as { data: LineRecord[] }).data;
          return records.length >= LINES + 4;
        }, 10_000);
        // One call record per line: the line's answer. The cut calls are attempts (two lines were cut).
        const calls = records.filter((record) => !record.is_attempt);
        expect(calls.map((record) => record.metadata.custom_id).sort()).toEqual(
          lines.map((line) => line.custom_id).sort(),
        );
        expect(calls.every((record) => record.status === 200)).toBe(true);
        const cut = records.filter((record) => record.is_attempt);
        expect(cut.map((record) => record.status)).toEqual([499, 499, 499, 499]);
        // Each cut call's record is the parent of its attempt's: no record hangs under a span without one.
        const spans = new Set(records.map((record) => record.span_id));
        for (const record of records) {
          if (record.parent_span_id !== null) expect(spans.has(record.parent_span_id)).toBe(true);
        }
        expect(cut.filter((record) => record.parent_span_id === null)).toHaveLength(2);
      } finally {
        await next.close();
      }
    },
    SLOW_TEST_MS,
  );
});
