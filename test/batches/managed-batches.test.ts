/**
 * Managed batches end to end with the official `openai` SDK against a real gateway (SQLite file) and two
 * fake OpenAI upstreams: every line through the whole pipeline (a fallback config), invalid lines
 * reported with their numbers, cancel keeping partial output, a batch whose every line fails, lines
 * that wait out a rate-limit policy's window.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { fileKey, VALIDATE_JOB } from '../../src/gateway/batches/batch-phases.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { postChat, startGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../management/http.js';
import {
  chatLine,
  contentLines,
  createBatch,
  finished,
  jsonl,
  sdk,
  sleep,
  target,
  until,
  upload,
  waitFor,
  SLOW_TEST_MS,
} from './support.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

let gateway: TestGateway;
let primary: FakeUpstream;
let backup: FakeUpstream;
/** Where the rate-limit counters' clock stands while a test holds it; it runs with Date.now() otherwise. */
let rateLimitNow: number | undefined;

beforeAll(async () => {
  // The primary fails every request for the model `flaky`: the config falls back to the backup.
  primary = await startFakeOpenAI({ name: 'primary', models: { flaky: { status: 500 } } });
  backup = await startFakeOpenAI({ name: 'backup', models: { broken: { status: 400 } } });
  gateway = await startGateway({
    env: { GATEWAY_BATCH_POLL_MS: '50', GATEWAY_BATCH_CONCURRENCY: '32' },
    rateLimitClock: () => rateLimitNow ?? Date.now(),
  });
});

afterAll(async () => {
  await gateway?.close();
  await primary?.close();
  await backup?.close();
});

const fallback = () => ({
  strategy: { mode: 'fallback' },
  targets: [target(primary), target(backup)],
});

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

interface LineRecord {
  status: number;
  metadata: Record<string, string>;
}

/** The log's records of a batch's lines, once there are `count`: a line's record is written after its
 * answer is in, not before the batch ends. */
async function lineRecords(batchId: string, count: number, limit = 10): Promise<LineRecord[]> {
  let records: LineRecord[] = [];
  for (let i = 0; i < 100 && records.length < count; i++) {
    if (i > 0) await sleep(50);
    const logs = await call(
      gateway.url,
      gateway.adminKey,
      'GET',
      `/logs?metadata.batch_id=${batchId}&limit=${limit}`,
    );
    records = (logs.body as { data: LineRecord[] }).data;
  }
  return records;
}

describe('a managed batch over two providers with a fallback config', () => {
  it(
    'answers 1,000 lines, each custom_id exactly once, in input order',
    async () => {
      primary.reset();
      backup.reset();
      const client = sdk(gateway.url, gateway.adminKey, fallback());
      const lines = Array.from({ length: 1000 }, (_, i) =>
        chatLine(`req-${i}`, i % 4 === 0 ? 'flaky' : 'gpt-4o-mini'),
      );
      const file = await upload(client, jsonl(lines));
      expect(file).toMatchObject({ object: 'file', purpose: 'batch', filename: 'input.jsonl' });

      const created = await createBatch(client, file.id, { metadata: { run: 'thousand' } });
      expect(created).toMatchObject({
        object: 'batch',
        status: 'validating',
        completion_window: 'immediate',
      });
      const batch = await waitFor(client, created.id, finished, SLOW_TEST_MS - 10_000);

      expect(batch.status).toBe('completed');
      expect(batch.request_counts).toEqual({ total: 1000, completed: 1000, failed: 0 });
      expect(batch.error_file_id).toBeNull();
      for (const at of [
        'created_at',
        'in_progress_at',
        'finalizing_at',
        'completed_at',
        'expires_at',
      ] as const) {
        expect(batch[at], at).toBeGreaterThan(0);
      }
      expect(batch.metadata).toEqual({ run: 'thousand' });
      expect(batch.usage?.total_tokens).toBeGreaterThan(0);

      const output = await contentLines(client, batch.output_file_id);
      expect(output.map((line) => line.custom_id)).toEqual(lines.map((line) => line.custom_id));
      expect(output.every((line) => line.response?.status_code === 200 && line.error === null)).toBe(true);
      expect(new Set(output.map((line) => line.id)).size).toBe(1000);

      // The flaky quarter was answered by the backup, after the primary failed it once each.
      const flaky = output.filter(
        (line) => line.custom_id.endsWith('0') || Number(line.custom_id.slice(4)) % 4 === 0,
      );
      expect(flaky.length).toBeGreaterThan(0);
      expect(countBy(backup.requests, (r) => r.path).get('/v1/chat/completions')).toBe(250);
      expect(primary.requests.length).toBe(1000);

      const outputFile = await client.files.retrieve(batch.output_file_id!);
      expect(outputFile).toMatchObject({ purpose: 'batch_output', object: 'file' });
    },
    SLOW_TEST_MS,
  );
});

describe('the log of a managed batch', () => {
  it("records each line under the batch's id and the line's custom_id, beside the creating request's metadata", async () => {
    const client = sdk(gateway.url, gateway.adminKey, target(backup));
    // A custom_id of 512 emoji is as long as a metadata value may be (characters are code points); one of
    // 513 is longer, and its record has none.
    const emoji = '\u{1F600}'.repeat(512);
    const lines = [chatLine('log-a'), chatLine('log-b'), chatLine(emoji), chatLine(`${emoji}x`)];
    const file = await upload(client, jsonl(lines));
    const created = await createBatch(client, file.id, {}, { 'x-gateway-metadata': '{"team":"search"}' });
    const batch = await waitFor(client, created.id, finished);
    expect(batch.status).toBe('completed');
    const records = await lineRecords(created.id, 4);
    expect(records.map((r) => r.metadata.custom_id ?? null).sort()).toEqual(['log-a', 'log-b', null, emoji]);
    for (const record of records)
      expect(record.metadata).toMatchObject({ team: 'search', batch_id: created.id });
  });
});

describe('validation', () => {
  it('fails a batch with invalid lines, each reported with its line number and field', async () => {
    const client = sdk(gateway.url, gateway.adminKey, fallback());
    const text = jsonl([
      chatLine('ok-1'),
      { method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [] } },
      chatLine('ok-1'),
      { ...chatLine('wrong-url'), url: '/v1/embeddings' },
      { custom_id: 'no-messages', method: 'POST', url: '/v1/chat/completions', body: { model: 'm' } },
      {
        ...chatLine('streams'),
        body: { model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true },
      },
      chatLine('ok-2'),
      // Nested far past what JSON.stringify can walk: still one invalid line, not a failed validation.
      '{"custom_id":"deep","method":"POST","url":"/v1/chat/completions","body":{"model":"m","messages":[],' +
        `"tools":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`,
    ]);
    const file = await upload(client, text);
    const created = await createBatch(client, file.id);
    const batch = await waitFor(client, created.id, finished, SLOW_TEST_MS - 10_000);
    expect(batch.status).toBe('failed');
    expect(batch.failed_at).toBeGreaterThan(0);
    const errors = batch.errors?.data ?? [];
    expect(errors.map((e) => [e.line, e.code, e.param])).toEqual([
      [2, 'missing_required_parameter', 'custom_id'],
      [3, 'duplicate_custom_id', 'custom_id'],
      [4, 'mismatched_endpoint', 'url'],
      [5, 'invalid_body', 'body.messages'],
      [6, 'unsupported_parameter', 'body.stream'],
      [8, 'invalid_body', 'body.tools'],
    ]);
  });

  it('refuses a bad request with a 4xx naming the field', async () => {
    const client = sdk(gateway.url, gateway.adminKey, fallback());
    const file = await upload(client, jsonl([chatLine('a')]));
    const attempts: Array<[Record<string, unknown>, string]> = [
      [{ input_file_id: 'file_missing' }, 'input_file_id'],
      [{ input_file_id: file.id, endpoint: '/v1/images' }, 'endpoint'],
      [{ input_file_id: file.id, completion_window: '1h' }, 'completion_window'],
      [{ input_file_id: file.id, metadata: { k: 'v'.repeat(513) } }, 'metadata.k'],
      [{ input_file_id: file.id, concurrency: 0 }, 'concurrency'],
      // OpenAI's bounds: an hour to 30 days after the file's creation.
      [{ output_expires_after: { anchor: 'created_at', seconds: 60 } }, 'output_expires_after.seconds'],
      [
        { output_expires_after: { anchor: 'created_at', seconds: 2_592_001 } },
        'output_expires_after.seconds',
      ],
      [{ output_expires_after: { anchor: 'created_at', seconds: 3600.5 } }, 'output_expires_after.seconds'],
      [{ output_expires_after: { anchor: 'completed_at', seconds: 3600 } }, 'output_expires_after.anchor'],
      [{ output_expires_after: { seconds: 3600 } }, 'output_expires_after.anchor'],
      [{ output_expires_after: { anchor: 'created_at' } }, 'output_expires_after.seconds'],
      [{ output_expires_after: 3600 }, 'output_expires_after'],
    ];
    for (const [body, param] of attempts) {
      const error = await client.batches
        .create({
          input_file_id: file.id,
          endpoint: '/v1/chat/completions',
          completion_window: 'immediate' as '24h',
          ...body,
        } as never)
        .catch((err: unknown) => err);
      expect(error, param).toBeInstanceOf(Error);
      expect((error as { status: number }).status, param).toBeGreaterThanOrEqual(400);
      expect((error as { status: number }).status, param).toBeLessThan(500);
      expect((error as { error: { param: string } }).error.param, param).toBe(param);
    }
    // A request that names no provider leaves it to its lines' models (catalog-model-lines.test.ts).
    // A virtual key the workspace does not have would fail every line: refused at once, naming it.
    const unknownKey = new OpenAI({
      baseURL: gateway.url,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'no-such-key' },
    });
    const missing = await createBatch(unknownKey, file.id).catch((err: unknown) => err);
    expect((missing as { status: number }).status).toBe(404);
    expect((missing as { error: { param: string } }).error.param).toBe('x-gateway-virtual-key');
    expect((await client.batches.list()).data.map((b) => b.input_file_id)).not.toContain(file.id);
  });
});

/** Every line a stopped batch never ran is in its error file, in input order, and counted as failed. */
async function expectUnfinishedInErrorFile(
  client: OpenAI,
  batch: OpenAI.Batches.Batch,
  total: number,
  code: string,
): Promise<void> {
  const output = await contentLines(client, batch.output_file_id);
  const errors = await contentLines(client, batch.error_file_id);
  expect(batch.request_counts).toEqual({ total, completed: output.length, failed: total - output.length });
  expect(errors.length).toBe(total - output.length);
  for (const line of errors) {
    expect(line.response).toBeNull();
    expect(line.error?.code).toBe(code);
    expect(line.error?.message).toBeTruthy();
  }
  const ids = (lines: typeof output) => lines.map((line) => line.custom_id);
  const index = (id: string) => Number(id.split('-')[1]);
  expect(ids(errors)).toEqual([...ids(errors)].sort((x, y) => index(x) - index(y)));
  expect(new Set([...ids(output), ...ids(errors)]).size).toBe(total);
}

describe('failures and cancelling', () => {
  it('completes a batch whose every line fails with an error file and no output file', async () => {
    const client = sdk(gateway.url, gateway.adminKey, { ...target(backup) });
    const file = await upload(client, jsonl([chatLine('x-1', 'broken'), chatLine('x-2', 'broken')]));
    const batch = await waitFor(client, (await createBatch(client, file.id)).id, finished);
    expect(batch.status).toBe('completed');
    expect(batch.output_file_id).toBeNull();
    expect(batch.request_counts).toEqual({ total: 2, completed: 0, failed: 2 });
    const errors = await contentLines(client, batch.error_file_id);
    expect(errors.map((line) => line.custom_id)).toEqual(['x-1', 'x-2']);
    expect(errors[0].response?.status_code).toBe(400);
    expect(errors[0].response?.body).toHaveProperty('error.message');
  });

  it(
    'gives every line a request_id and a record, a line refused before its call (its stored config gone) too',
    async () => {
      const slow = await startFakeOpenAI({ name: 'config-gone', latencyMs: 300 });
      try {
        const slug = 'batch-config-gone';
        const stored = await call(gateway.url, gateway.adminKey, 'POST', '/configs', {
          slug,
          config: target(slow),
        });
        expect(stored.status, stored.text).toBe(200);
        const client = sdk(gateway.url, gateway.adminKey);
        const lines = [chatLine('g-1'), chatLine('g-2'), chatLine('g-3')];
        const file = await upload(client, jsonl(lines));
        const created = await createBatch(client, file.id, { concurrency: 1 }, { 'x-gateway-config': slug });
        // The first line is with the provider when its config is deleted: the others find none.
        await until(() => slow.requests.length > 0, 30_000);
        const deleted = await call(gateway.url, gateway.adminKey, 'DELETE', `/configs/${slug}`);
        expect(deleted.status, deleted.text).toBe(200);
        const batch = await waitFor(client, created.id, finished);
        expect(batch.request_counts).toEqual({ total: 3, completed: 1, failed: 2 });
        const output = await contentLines(client, batch.output_file_id);
        const errors = await contentLines(client, batch.error_file_id);
        expect(errors.map((line) => [line.custom_id, line.response?.status_code])).toEqual([
          ['g-2', 404],
          ['g-3', 404],
        ]);
        const ids = [...output, ...errors].map((line) => line.response?.request_id);
        expect(
          ids.every((id) => typeof id === 'string' && id.length > 0),
          JSON.stringify(ids),
        ).toBe(true);
        expect(new Set(ids).size).toBe(3);
        // Each is recorded, as a direct call refused for its config is.
        const records = await lineRecords(created.id, 3);
        expect(records.map((r) => [r.metadata.custom_id, r.status]).sort()).toEqual([
          ['g-1', 200],
          ['g-2', 404],
          ['g-3', 404],
        ]);
      } finally {
        await slow.close();
      }
    },
    SLOW_TEST_MS,
  );

  it('reports no requests for a batch cancelled while validating, as none of its lines ran', async () => {
    const { batches } = gateway.server.deps.store;
    const insert = batches.insertLines.bind(batches);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let stored!: () => void;
    const storing = new Promise<void>((resolve) => (stored = resolve));
    // Validation is held after its first 500 lines are stored.
    batches.insertLines = async (id, lines) => {
      await insert(id, lines);
      stored();
      await held;
    };
    try {
      const client = sdk(gateway.url, gateway.adminKey, target(primary));
      const lines = Array.from({ length: 1_200 }, (_, i) => chatLine(`v-${i}`));
      const file = await upload(client, jsonl(lines));
      const created = await createBatch(client, file.id);
      await storing;
      expect((await client.batches.cancel(created.id)).status).toBe('cancelling');
      batches.insertLines = insert;
      release();
      const batch = await waitFor(client, created.id, finished);
      expect(batch.status).toBe('cancelled');
      expect(batch.request_counts).toEqual({ total: 0, completed: 0, failed: 0 });
      expect(batch.output_file_id).toBeNull();
    } finally {
      batches.insertLines = insert;
      release();
    }
  });

  it('leaves no line of a batch cancelled and finalized while its validation stores its last lines', async () => {
    const { blobs } = gateway.server.deps;
    const { batches, jobs } = gateway.server.deps.store;
    const get = blobs.get.bind(blobs);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let storing!: () => void;
    const aboutToStore = new Promise<void>((resolve) => (storing = resolve));
    try {
      const client = sdk(gateway.url, gateway.adminKey, target(primary));
      const file = await upload(client, jsonl([chatLine('late-1'), chatLine('late-2')]));
      // Validation reads every line of the input, and is held before the input ends.
      blobs.get = async (key) => {
        const content = await get(key);
        if (key !== fileKey(file.id) || !content) return content;
        return Readable.from(
          (async function* () {
            yield* content;
            storing();
            await held;
          })(),
        );
      };
      const created = await createBatch(client, file.id);
      await aboutToStore;
      await client.batches.cancel(created.id);
      const batch = await waitFor(client, created.id, finished);
      expect(batch.status).toBe('cancelled');
      release();
      await vi.waitFor(
        async () => {
          const done = (await jobs.list({ kind: VALIDATE_JOB, status: 'completed' })).data;
          expect(done.map((job) => (job.payload as { batch_id: string }).batch_id)).toContain(created.id);
        },
        { timeout: 10_000 },
      );
      // Nothing of the batch is left to run, or to keep.
      expect((await batches.lineCounts(created.id)).total).toBe(0);
      expect((await client.batches.retrieve(created.id)).status).toBe('cancelled');
    } finally {
      blobs.get = get;
      release();
    }
  });

  it('refuses to cancel a batch that completed, a day on, saying it completed rather than expired', async () => {
    const client = sdk(gateway.url, gateway.adminKey, target(backup));
    const file = await upload(client, jsonl([chatLine('day-1')]));
    const batch = await waitFor(client, (await createBatch(client, file.id)).id, finished);
    expect(batch.status).toBe('completed');
    // A day later: its expires_at (24 hours from its creation) has passed.
    await gateway.server.deps.store.batches.update(batch.id, {
      expires_at: Math.floor(Date.now() / 1000) - 60,
    });
    const refused = (await client.batches.cancel(batch.id).catch((err: unknown) => err)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(refused.status).toBe(409);
    expect(refused.message).toContain('completed');
    expect(refused.message).not.toContain('expired');
    expect((await client.batches.retrieve(batch.id)).status).toBe('completed');
  });

  it(
    'refuses to cancel a batch past its expiry, as a finished one, and ends it expired',
    async () => {
      const slow = await startFakeOpenAI({ name: 'expiring', latencyMs: 40 });
      try {
        const client = sdk(gateway.url, gateway.adminKey, target(slow));
        const lines = Array.from({ length: 100 }, (_, i) => chatLine(`e-${i}`));
        const file = await upload(client, jsonl(lines));
        const created = await createBatch(client, file.id, { concurrency: 1 });
        await waitFor(client, created.id, (b) => (b.request_counts?.completed ?? 0) >= 1);
        const expiresAt = Math.floor(Date.now() / 1000) - 1;
        await gateway.server.deps.store.batches.update(created.id, { expires_at: expiresAt });
        const refused = (await client.batches
          .cancel(created.id)
          .catch((err: unknown) => err)) as InstanceType<typeof OpenAI.APIError>;
        expect(refused.status).toBe(409);
        expect(refused.message).toContain('expired');
        const batch = await waitFor(client, created.id, finished, SLOW_TEST_MS - 10_000);
        expect(batch.status).toBe('expired');
        expect(batch.cancelling_at).toBeNull();
        await expectUnfinishedInErrorFile(client, batch, lines.length, 'batch_expired');
      } finally {
        await slow.close();
      }
    },
    SLOW_TEST_MS,
  );

  it(
    'cancels mid-run and keeps the lines already answered',
    async () => {
      const slow = await startFakeOpenAI({ name: 'slow', latencyMs: 40 });
      try {
        const client = sdk(gateway.url, gateway.adminKey, target(slow));
        const lines = Array.from({ length: 300 }, (_, i) => chatLine(`c-${i}`));
        const file = await upload(client, jsonl(lines));
        const created = await createBatch(client, file.id, { concurrency: 2 });
        await waitFor(client, created.id, (b) => (b.request_counts?.completed ?? 0) >= 5);
        const cancelling = await client.batches.cancel(created.id);
        expect(cancelling.status).toBe('cancelling');
        expect(cancelling.cancelling_at).toBeGreaterThan(0);
        const batch = await waitFor(client, created.id, finished, SLOW_TEST_MS - 10_000);
        expect(batch.status).toBe('cancelled');
        expect(batch.cancelled_at).toBeGreaterThan(0);
        const output = await contentLines(client, batch.output_file_id);
        expect(output.length).toBe(batch.request_counts?.completed);
        expect(output.length).toBeGreaterThanOrEqual(5);
        expect(output.length).toBeLessThan(300);
        expect(new Set(output.map((line) => line.custom_id)).size).toBe(output.length);
        // Nothing was sent after the cancel settled.
        expect(slow.requests.length).toBe(output.length);
        await expectUnfinishedInErrorFile(client, batch, lines.length, 'batch_cancelled');
      } finally {
        await slow.close();
      }
    },
    SLOW_TEST_MS,
  );
});

describe('progress', () => {
  it(
    'shows counts and usage of the lines settled so far while the batch runs, consistent with each other',
    async () => {
      const slow = await startFakeOpenAI({ name: 'progress', latencyMs: 30 });
      try {
        const client = sdk(gateway.url, gateway.adminKey, target(slow));
        // The same text on every line: every answer has the same usage.
        const lines = Array.from({ length: 60 }, (_, i) =>
          chatLine(`p-${i}`, 'gpt-4o-mini', 'same question'),
        );
        const file = await upload(client, jsonl(lines));
        const created = await createBatch(client, file.id, { concurrency: 2 });
        const midway = await waitFor(client, created.id, (b) => (b.request_counts?.completed ?? 0) >= 4);
        const batch = await waitFor(client, created.id, finished, SLOW_TEST_MS - 10_000);

        expect(batch.request_counts).toEqual({ total: 60, completed: 60, failed: 0 });
        const perLine = batch.usage!.total_tokens / 60;
        expect(perLine).toBeGreaterThan(0);
        expect(Number.isInteger(perLine)).toBe(true);
        expect(midway.status).toBe('in_progress');
        const settled = midway.request_counts!.completed;
        expect(settled).toBeLessThan(60);
        expect(midway.request_counts!.total).toBe(60);
        expect(midway.usage!.total_tokens).toBe(settled * perLine);
        expect(midway.usage!.input_tokens).toBe((settled * batch.usage!.input_tokens) / 60);
      } finally {
        await slow.close();
      }
    },
    SLOW_TEST_MS,
  );
});

describe('listing and reading', () => {
  it('lists batches newest first with a cursor, and 404s another id', async () => {
    const client = sdk(gateway.url, gateway.adminKey, fallback());
    const page = await client.batches.list({ limit: 2 });
    expect(page.data.length).toBe(2);
    expect(page.has_more).toBe(true);
    const next = await client.batches.list({ limit: 2, after: page.data[1].id });
    expect(next.data[0].id < page.data[1].id).toBe(true);
    // An empty cursor (a templated URL's `?after=`) is the first page.
    const empty = await fetch(`${gateway.url}/batches?limit=2&after=`, {
      headers: { 'x-gateway-api-key': gateway.adminKey },
    });
    expect(((await empty.json()) as { data: Array<{ id: string }> }).data.map((b) => b.id)).toEqual(
      page.data.map((b) => b.id),
    );
    const missing = await client.batches.retrieve('batch_nope').catch((err: unknown) => err);
    expect((missing as { status: number }).status).toBe(404);
    const bad = await fetch(`${gateway.url}/batches?limit=101`, {
      headers: { 'x-gateway-api-key': gateway.adminKey },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('limit');
  });
});

describe('rate-limit policies', () => {
  it(
    'make a line wait for its window instead of failing it',
    async () => {
      const limited = await startFakeOpenAI({ name: 'limited' });
      // The window's room comes back one request every half second: on the counters' own clock a batch
      // whose lines took longer than 3 s to start (a loaded host) had room for every one of them, none
      // waited and the test saw no refusal. Held still, the clock gives 120 lines room however long they
      // take, and none to the other 6 until the test moves it on.
      rateLimitNow = Date.now();
      try {
        const policy = await call(gateway.url, gateway.adminKey, 'POST', '/policies/rate-limits', {
          conditions: [{ key: 'metadata.case', value: 'batch-limits' }],
          group_by: [{ key: 'api_key' }],
          type: 'requests',
          unit: 'rpm',
          value: 120,
        });
        expect(policy.status, policy.text).toBe(200);
        const client = gatewayOpenAI(gateway, target(limited), {
          'x-gateway-metadata': JSON.stringify({ case: 'batch-limits' }),
        });
        const { stats } = gateway.server.deps.routing.rateLimits;
        const refusedBefore = stats.refused;
        const lines = Array.from({ length: 126 }, (_, i) => chatLine(`limited-${i}`));
        const file = await upload(client, jsonl(lines));
        const created = await createBatch(client, file.id);
        await waitFor(client, created.id, (batch) => batch.request_counts?.completed === 120);
        // Each of the 6 lines left is refused every time it is tried (a second apart, its Retry-After),
        // and waits: the batch runs on with none of them failed or sent to the provider.
        await until(() => stats.refused >= refusedBefore + 6, 30_000);
        const waiting = await client.batches.retrieve(created.id);
        expect(waiting.status).toBe('in_progress');
        expect(waiting.request_counts).toEqual({ total: 126, completed: 120, failed: 0 });
        expect(limited.requests.length).toBe(120);

        rateLimitNow += 3_000;
        const batch = await waitFor(client, created.id, finished);
        expect(batch.status).toBe('completed');
        expect(batch.request_counts).toEqual({ total: 126, completed: 126, failed: 0 });
        // Refusals never reached the provider: one request per line.
        expect(limited.requests.length).toBe(126);
      } finally {
        rateLimitNow = undefined;
        await limited.close();
      }
    },
    SLOW_TEST_MS,
  );

  it(
    'leave one record per line, for the run that answered it, not one for each refusal it waited out',
    async () => {
      const limited = await startFakeOpenAI({ name: 'limited-records' });
      // Held still, the clock gives 60 lines room and none to the last until the test moves it on.
      rateLimitNow = Date.now();
      try {
        const policy = await call(gateway.url, gateway.adminKey, 'POST', '/policies/rate-limits', {
          conditions: [{ key: 'metadata.case', value: 'batch-records' }],
          group_by: [{ key: 'api_key' }],
          type: 'requests',
          unit: 'rpm',
          value: 60,
        });
        expect(policy.status, policy.text).toBe(200);
        const client = gatewayOpenAI(gateway, target(limited), {
          'x-gateway-metadata': JSON.stringify({ case: 'batch-records' }),
        });
        const { stats } = gateway.server.deps.routing.rateLimits;
        const refusedBefore = stats.refused;
        const lines = Array.from({ length: 61 }, (_, i) => chatLine(`recorded-${i}`));
        const created = await createBatch(client, (await upload(client, jsonl(lines))).id);
        await waitFor(client, created.id, (batch) => batch.request_counts?.completed === 60);
        // The last line is refused, waits its Retry-After (a second) and is refused again.
        await until(() => stats.refused >= refusedBefore + 2, 30_000);
        rateLimitNow += 60_000;
        const batch = await waitFor(client, created.id, finished);
        expect(batch.request_counts).toEqual({ total: 61, completed: 61, failed: 0 });

        const records = await lineRecords(created.id, 61, 1000);
        // Written after their answers: a refusal's record, were there one, came long before.
        await sleep(200);
        const again = await lineRecords(created.id, 61, 1000);
        expect(again.length).toBe(records.length);
        expect(countBy(again, (r) => String(r.status))).toEqual(new Map([['200', 61]]));
        expect(new Set(again.map((r) => r.metadata.custom_id)).size).toBe(61);
      } finally {
        rateLimitNow = undefined;
        await limited.close();
      }
    },
    SLOW_TEST_MS,
  );
});

describe('the cache', () => {
  it('keeps a batch in the cache namespace it was created in', async () => {
    const cached = await startFakeOpenAI({ name: 'cached' });
    try {
      const config = target(cached, { cache: { mode: 'simple' } });
      const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'shared question' }] };
      // Answered and cached outside any namespace.
      const direct = await postChat(gateway, config, body);
      expect(direct.status).toBe(200);
      expect(cached.requests.length).toBe(1);

      const client = sdk(gateway.url, gateway.adminKey, config);
      const file = await upload(client, jsonl([{ ...chatLine('ns-1'), body }]));
      const created = await createBatch(client, file.id, {}, { 'x-gateway-cache-namespace': 'tenant-a' });
      const batch = await waitFor(client, created.id, finished);
      expect(batch.request_counts).toEqual({ total: 1, completed: 1, failed: 0 });
      // tenant-a had nothing cached: the line went to the provider, and its answer is tenant-a's.
      expect(cached.requests.length).toBe(2);
      const again = await postChat(gateway, config, body, { 'x-gateway-cache-namespace': 'tenant-a' });
      expect(again.headers.get('x-gateway-cache-status')).toBe('HIT');
      expect(cached.requests.length).toBe(2);
    } finally {
      await cached.close();
    }
  });
});

describe('output_expires_after', () => {
  it('makes the output and error files expire that long after they are written', async () => {
    const client = sdk(gateway.url, gateway.adminKey, target(backup));
    const file = await upload(client, jsonl([chatLine('o-1'), chatLine('o-2', 'broken')]));
    const created = await createBatch(client, file.id, {
      output_expires_after: { anchor: 'created_at', seconds: 3600 },
    });
    const batch = await waitFor(client, created.id, finished);
    const ids = [batch.output_file_id!, batch.error_file_id!];
    for (const id of ids) {
      const result = await client.files.retrieve(id);
      expect(result.expires_at).toBe(result.created_at + 3600);
    }
    // The input, and the files of a batch that asks nothing, are kept until deleted.
    expect((await client.files.retrieve(file.id)).expires_at).toBeNull();
    const kept = await waitFor(client, (await createBatch(client, file.id)).id, finished);
    expect((await client.files.retrieve(kept.output_file_id!)).expires_at).toBeNull();

    const realNow = Date.now.bind(Date);
    const anHourLater = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 3_601_000);
    try {
      for (const id of ids) {
        const gone = await client.files.retrieve(id).catch((err: unknown) => err);
        expect((gone as { status: number }).status).toBe(404);
        const content = await client.files.content(id).catch((err: unknown) => err);
        expect((content as { status: number }).status).toBe(404);
      }
      const listed = (await client.files.list()).data.map((f) => f.id);
      expect(listed).not.toContain(ids[0]);
      expect(listed).toContain(kept.output_file_id);
      // A worker deletes their contents too.
      await vi.waitFor(
        async () => {
          for (const id of ids) expect(await gateway.server.deps.blobs.get(fileKey(id))).toBeUndefined();
        },
        { timeout: 10_000 },
      );
      const keptContent = await gateway.server.deps.blobs.get(fileKey(kept.output_file_id!));
      expect(keptContent).toBeDefined();
      keptContent?.destroy();
    } finally {
      anHourLater.mockRestore();
    }
  });
});

describe('async hooks', () => {
  it(
    'finish a line when its answer is in, not when its async hooks end',
    async () => {
      const HOOK_DELAY_MS = 4_000;
      let audited = 0;
      const webhook = createServer((request, response) => {
        request.resume();
        setTimeout(() => {
          audited += 1;
          response.setHeader('content-type', 'application/json');
          response.end(JSON.stringify({ verdict: true }));
        }, HOOK_DELAY_MS);
      });
      await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
      try {
        const webhookURL = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/audit`;
        const config = target(primary, {
          after_request_hooks: [
            { id: 'audit', async: true, checks: [{ id: 'default.webhook', parameters: { webhookURL } }] },
          ],
        });
        const client = sdk(gateway.url, gateway.adminKey, config);
        const file = await upload(client, jsonl([chatLine('a-1'), chatLine('a-2'), chatLine('a-3')]));
        const started = Date.now();
        const created = await createBatch(client, file.id, { concurrency: 1 });
        const batch = await waitFor(client, created.id, finished);
        expect(batch.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
        // One line at a time: waiting on the hook, the three would take three of its delays.
        expect(Date.now() - started).toBeLessThan(HOOK_DELAY_MS);
        // The hooks still ran, for every line.
        await vi.waitFor(() => expect(audited).toBe(3), { timeout: 3 * HOOK_DELAY_MS });
      } finally {
        webhook.closeAllConnections();
        await new Promise((resolve) => webhook.close(resolve));
      }
    },
    SLOW_TEST_MS,
  );
});

describe('the store failing under the worker', () => {
  it(
    'runs a batch whose stored call could not be read once, instead of failing its lines for good',
    async () => {
      const node = await startGateway({
        env: { GATEWAY_BATCH_POLL_MS: '50', GATEWAY_BATCH_LEASE_MS: '600' },
      });
      const up = await startFakeOpenAI({ name: 'after-outage' });
      try {
        const { batches } = node.server.deps.store;
        const read = batches.callOf.bind(batches);
        let failures = 1;
        // The first read of the batch's call meets a store that cannot answer (a dropped connection).
        batches.callOf = (id) =>
          failures-- > 0 ? Promise.reject(new Error('connection terminated unexpectedly')) : read(id);
        const client = sdk(node.url, node.adminKey, target(up));
        const file = await upload(client, jsonl([chatLine('o-1'), chatLine('o-2')]));
        const batch = await waitFor(client, (await createBatch(client, file.id)).id, finished, 20_000);
        expect(batch.status).toBe('completed');
        expect(batch.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
        expect((await contentLines(client, batch.output_file_id)).map((line) => line.custom_id)).toEqual([
          'o-1',
          'o-2',
        ]);
      } finally {
        await node.close();
        await up.close();
      }
    },
    SLOW_TEST_MS,
  );

  it(
    'finalizes a batch whose output file could not be written for longer than a job tries, once it can',
    async () => {
      const node = await startGateway({
        env: { GATEWAY_BATCH_POLL_MS: '50', GATEWAY_BATCH_LEASE_MS: '600' },
      });
      const up = await startFakeOpenAI({ name: 'storage-outage' });
      const { blobs } = node.server.deps;
      const put = blobs.put.bind(blobs);
      try {
        // The blob storage refuses the output file 11 times in a row: one more than a job's attempts.
        let failures = 11;
        blobs.put = (key, data) =>
          key.endsWith('_output') && failures-- > 0
            ? Promise.reject(new Error('connect ECONNREFUSED (storage)'))
            : put(key, data);
        const client = sdk(node.url, node.adminKey, target(up));
        const file = await upload(client, jsonl([chatLine('s-1'), chatLine('s-2')]));
        const batch = await waitFor(client, (await createBatch(client, file.id)).id, finished, 60_000);
        expect(failures).toBeLessThan(0);
        expect(batch.status).toBe('completed');
        expect(batch.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
        expect((await contentLines(client, batch.output_file_id)).map((line) => line.custom_id)).toEqual([
          's-1',
          's-2',
        ]);
      } finally {
        blobs.put = put;
        await node.close();
        await up.close();
      }
    },
    SLOW_TEST_MS,
  );
});
