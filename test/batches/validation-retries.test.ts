/**
 * A batch's validation that the store or the blob storage fails (a connection dropped, the storage away
 * for a few seconds) runs again after a growing wait, for minutes, rather than fail the batch after five
 * tries a second apart: an outage of a few seconds does not fail a batch whose input is fine. Only once
 * the failures have gone on for the worker's `retryForMs` does the batch fail. Over the embedded store (a
 * SQLite file) and a local blob storage; the store's read of the input file is made to fail on demand.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { fileKey, VALIDATE_JOB } from '../../src/gateway/batches/batch-phases.js';
import { startBatchWorker, type BatchWorker } from '../../src/gateway/batches/batch-worker.js';
import type { GatewayDeps } from '../../src/gateway/deps.js';
import { createLocalBlobStore } from '../../src/store/local-blob-store.js';
import { openStore, type Store } from '../../src/store/index.js';
import { chatLine, jsonl, until } from './support.js';

let dataDir: string;
let store: Store;
let worker: BatchWorker | undefined;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gateway-validation-retries-'));
  store = await openStore({ dataDir, masterKey: randomBytes(32) });
});

afterEach(async () => {
  await worker?.close(0);
  worker = undefined;
  vi.restoreAllMocks();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function connectionDropped(): Error {
  return Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
}

/** A batch `validating`, its input file of `lines` chat lines stored, and its validation queued. */
async function validatingBatch(lines: number) {
  const org = await store.createOrganisation({ name: 'Validation' });
  const workspace = await store.createWorkspace({ organisation_id: org.id, name: 'V', slug: 'v' });
  const { key } = await store.createApiKey({
    organisation_id: org.id,
    workspace_id: workspace.id,
    name: 'validation',
    role: 'admin',
    expires_at: null,
    metadata: {},
  });
  const blobs = createLocalBlobStore(join(dataDir, 'blobs'));
  const text = jsonl(Array.from({ length: lines }, (_, i) => chatLine(`line-${i}`, '@openai/gpt-4o-mini')));
  const fileId = 'file-validation-input';
  const stored = await blobs.put(fileKey(fileId), Buffer.from(text));
  await store.files.create({
    id: fileId,
    workspace_id: workspace.id,
    purpose: 'batch',
    filename: 'input.jsonl',
    bytes: stored.bytes,
    line_count: lines,
    created_at: Math.floor(Date.now() / 1000),
  });
  const batch = await store.batches.create({
    workspace_id: workspace.id,
    endpoint: '/v1/chat/completions',
    input_file_id: fileId,
    completion_window: 'immediate',
    metadata: null,
    concurrency: null,
    expires_at: Math.floor(Date.now() / 1000) + 3600,
    call: {
      caller: { id: key.id, organisation_id: org.id, workspace_id: workspace.id },
      headers: {},
      metadata: {},
      trace_id: 't',
    },
  });
  await store.jobs.enqueue({
    kind: VALIDATE_JOB,
    workspace_id: workspace.id,
    payload: { batch_id: batch.id },
    max_attempts: 5,
  });
  return { batch, blobs };
}

function startWorker(blobs: GatewayDeps['blobs'], retryForMs?: number) {
  const deps = {
    store,
    logger: pino({ level: 'silent' }),
    settings: { batchMaxLines: 1000, bodyLimitBytes: 1024 * 1024 },
    blobs,
  } as unknown as GatewayDeps;
  // No line is run: the batch's lines are only validated here.
  vi.spyOn(store.batches, 'claimLines').mockResolvedValue([]);
  worker = startBatchWorker(deps, {
    nodeConcurrency: 1,
    batchConcurrency: 1,
    leaseMs: 30_000,
    pollMs: 20,
    retryForMs,
  });
}

/** Fails the store's reads of files for `ms` from now; counts them. */
function failFileReadsFor(ms: number) {
  const until = Date.now() + ms;
  const get = store.files.get.bind(store.files);
  let failed = 0;
  vi.spyOn(store.files, 'get').mockImplementation(async (workspaceId, id) => {
    if (Date.now() < until) {
      failed += 1;
      throw connectionDropped();
    }
    return get(workspaceId, id);
  });
  return { failed: () => failed };
}

const statusOf = async (batchId: string) => (await store.batches.getById(batchId))?.status;

it('validates a batch whose store failed its reads for several seconds', async () => {
  const { batch, blobs } = await validatingBatch(3);
  const reads = failFileReadsFor(7000);
  startWorker(blobs);
  await until(async () => (await statusOf(batch.id)) !== 'validating', 30_000);
  const validated = await store.batches.getById(batch.id);
  expect(validated?.status, JSON.stringify(validated?.errors)).toBe('in_progress');
  expect(validated?.total).toBe(3);
  // It was tried more than five times, further apart as the failures went on.
  expect(reads.failed()).toBeGreaterThan(5);
  expect(reads.failed()).toBeLessThan(40);
}, 60_000);

it('fails a batch once its validation has failed for retryForMs', async () => {
  const { batch, blobs } = await validatingBatch(3);
  const reads = failFileReadsFor(60_000);
  startWorker(blobs, 3000);
  const started = Date.now();
  await until(async () => (await statusOf(batch.id)) !== 'validating', 30_000);
  expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
  const failed = await store.batches.getById(batch.id);
  expect(failed?.status).toBe('failed');
  expect(failed?.errors?.[0]).toMatchObject({ code: 'internal_error' });
  expect(reads.failed()).toBeGreaterThan(5);
  // The last job of the validation is done with: none is left queued.
  const queued = await store.jobs.list({ kind: VALIDATE_JOB, status: 'queued' });
  expect(queued.data).toEqual([]);
}, 60_000);

it('fails a batch at once when the store refused what its validation wrote', async () => {
  // More lines than a validation stores at once (500): the first of them are stored before the last.
  const { batch, blobs } = await validatingBatch(600);
  let refused = 0;
  vi.spyOn(store.batches, 'insertLines').mockImplementation(async () => {
    refused += 1;
    // A value the database refuses (a text it cannot hold): written again, it fails again.
    throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
  });
  startWorker(blobs);
  await until(async () => (await statusOf(batch.id)) !== 'validating', 10_000);
  expect(await statusOf(batch.id)).toBe('failed');
  expect(refused).toBe(1);
}, 30_000);
