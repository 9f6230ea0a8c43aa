/**
 * A gateway node stopped (SIGTERM: `close`) while it finalizes a managed batch — writing its output file to
 * S3-compatible storage that has stopped answering — stops at the cut of its grace period and gives the
 * finalization back without using up one of its attempts; the next node writes the files, and the batch's
 * output has each line once. The nodes share a PostgreSQL schema and a bucket, reached through a proxy
 * that can hold the output file's upload unanswered; the first node only serves the API.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FINALIZE_JOB } from '../../src/gateway/batches/batch-phases.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { batchJob } from './stopping-nodes.js';
import {
  chatLine,
  contentLines,
  createBatch,
  finished,
  jsonl,
  sdk,
  SLOW_TEST_MS,
  target,
  upload,
  waitFor,
} from './support.js';

const LINES = 20;
const graceMs = 1000;

interface HoldingProxy {
  endpoint: string;
  /** Uploads of an output file taken, and never answered, while `holding`. */
  held: string[];
  holding: boolean;
  close(): Promise<void>;
}

/** Passes requests on to `target`; while `holding`, an upload of a batch's output file is never answered. */
async function startHoldingProxy(target: string): Promise<HoldingProxy> {
  const proxy: HoldingProxy = { endpoint: '', held: [], holding: false, close: async () => undefined };
  const server = http.createServer((request, response) => {
    if (proxy.holding && request.method === 'PUT' && request.url?.includes('_output')) {
      proxy.held.push(request.url);
      request.resume();
      return;
    }
    const onward = http.request(
      `${target}${request.url}`,
      { method: request.method, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    onward.on('error', () => response.destroy());
    request.pipe(onward);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  proxy.endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  proxy.close = async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  };
  return proxy;
}

describeWithPostgres('a managed batch whose node stops while finalizing it', () => {
  const schema = freshSchemaName('finalization_stops');
  let fake: FakeUpstream;
  let s3: TestS3;
  let proxy: HoldingProxy;
  let env: Record<string, string>;
  let front: TestGateway;
  let client: OpenAI;

  function start(extra: Record<string, string>): Promise<TestGateway> {
    return startGateway({ postgres: { url: postgresUrl(), schema }, env: { ...env, ...extra } });
  }

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'finalization-stops' });
    s3 = await startS3();
    proxy = await startHoldingProxy(s3.endpoint);
    env = {
      ...s3.env,
      GATEWAY_S3_ENDPOINT: proxy.endpoint,
      GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
      GATEWAY_BATCH_POLL_MS: '20',
    };
    front = await start({ GATEWAY_BATCH_WORKER: 'false' });
    client = sdk(front.url, front.adminKey, target(fake));
  });
  afterAll(async () => {
    await front?.close();
    await proxy?.close();
    await s3?.close();
    await fake?.close();
    await dropSchema(schema);
  });

  const finalizationOf = (batchId: string) => batchJob(front, FINALIZE_JOB, batchId);

  it(
    'stops at the cut, gives the finalization back with its attempt, and the next node writes each line once',
    async () => {
      const lines = Array.from({ length: LINES }, (_, i) => chatLine(`final-${i}`));
      const input = await upload(client, jsonl(lines));
      const batch = await createBatch(client, input.id);
      proxy.holding = true;
      const node = await start({ GATEWAY_SHUTDOWN_GRACE_MS: String(graceMs) });
      const deadline = Date.now() + 30_000;
      while (proxy.held.length === 0 && Date.now() < deadline)
        await new Promise((done) => setTimeout(done, 10));
      expect(proxy.held).toHaveLength(1);

      const started = Date.now();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        node.close(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('close() hung')), graceMs + 10_000);
        }),
      ]).finally(() => clearTimeout(timer));
      expect(Date.now() - started).toBeLessThan(graceMs + 750);
      expect(await finalizationOf(batch.id)).toMatchObject({ status: 'queued', attempts: 0 });
      expect((await client.batches.retrieve(batch.id)).status).toBe('finalizing');

      proxy.holding = false;
      const next = await start({});
      try {
        const done = await waitFor(client, batch.id, finished, 60_000);
        expect(done.status).toBe('completed');
        expect(done.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
        const output = await contentLines(client, done.output_file_id);
        expect(output.map((line) => line.custom_id)).toEqual(lines.map((line) => line.custom_id));
        expect(fake.requests.length).toBe(LINES);
        expect(await finalizationOf(batch.id)).toMatchObject({ status: 'completed', attempts: 1 });
      } finally {
        await next.close();
      }
    },
    SLOW_TEST_MS,
  );
});
