/**
 * Batch and File objects against the OpenAI document's `Batch` and `OpenAIFile` schemas, in every state a
 * client reads them in (a batch validating, completed, failed, cancelled; a file uploaded, a batch's output
 * and error files), through the official `openai` SDK. The document declares some of their fields with a
 * type that has no `null`, yet the real API sends `null` for them while they are unset, and the SDKs take
 * it: the gateway does as the real API does. Those fields, and only those, may be `null` here.
 */
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValidAllowingNull, validateAgainstOpenAPI } from '../helpers/openapi.js';
import {
  chatLine,
  createBatch,
  finished,
  jsonl,
  sdk,
  target,
  upload,
  waitFor,
  SLOW_TEST_MS,
} from './support.js';

/** A Batch's fields the real API sends as `null` while unset (docs/batches.md): no errors, no output or
 * error file yet, a step not reached (its `*_at`). A batch's `expires_at` is always set. */
export const BATCH_NULL_FIELDS = [
  'errors',
  'output_file_id',
  'error_file_id',
  'in_progress_at',
  'finalizing_at',
  'completed_at',
  'failed_at',
  'expired_at',
  'cancelling_at',
  'cancelled_at',
] as const;

/** A File's fields the real API sends as `null` (docs/files.md): the deprecated `status_details`, and
 * `expires_at` of a file kept until deleted. */
export const FILE_NULL_FIELDS = ['status_details', 'expires_at'] as const;

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'nulls', models: { broken: { status: 400 } } });
  gateway = await startGateway({ env: { GATEWAY_BATCH_POLL_MS: '50' } });
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

const validBatch = (batch: unknown) => expectOpenAPIValidAllowingNull('Batch', batch, BATCH_NULL_FIELDS);
const validFile = (file: unknown) => expectOpenAPIValidAllowingNull('OpenAIFile', file, FILE_NULL_FIELDS);

describe('Batch and File objects against the OpenAI document', () => {
  it(
    'are valid in every state with only the named fields null',
    async () => {
      const client = sdk(gateway.url, gateway.adminKey, target(fake));
      const input = await upload(client, jsonl([chatLine('a'), chatLine('b', 'broken')]));
      validFile(input);
      expect(input.status_details).toBeNull();
      // Without the allowance, the document refuses the null the real API sends.
      expect(validateAgainstOpenAPI('OpenAIFile', input).valid).toBe(false);

      const created = await createBatch(client, input.id);
      validBatch(created);
      expect(created.output_file_id).toBeNull();
      expect(validateAgainstOpenAPI('Batch', created).valid).toBe(false);

      const done = await waitFor(client, created.id, finished);
      validBatch(done);
      expect(done.status).toBe('completed');
      for (const id of [done.output_file_id, done.error_file_id]) {
        expect(id).toEqual(expect.any(String));
        validFile(await client.files.retrieve(id!));
      }

      const invalid = await upload(
        client,
        jsonl([{ method: 'POST', url: '/v1/chat/completions', body: {} }]),
      );
      const failed = await waitFor(client, (await createBatch(client, invalid.id)).id, finished);
      expect(failed.status).toBe('failed');
      expect(failed.errors?.data?.length).toBeGreaterThan(0);
      validBatch(failed);

      const many = await upload(client, jsonl(Array.from({ length: 50 }, (_, i) => chatLine(`c-${i}`))));
      const toCancel = await createBatch(client, many.id);
      validBatch(await client.batches.cancel(toCancel.id));
      validBatch(await waitFor(client, toCancel.id, finished));

      for await (const batch of client.batches.list()) validBatch(batch);
      for await (const file of client.files.list()) validFile(file);

      const expiring = await client.files.create({
        file: await toFile(Buffer.from('{}\n'), 'expiring.jsonl'),
        purpose: 'user_data',
        expires_after: { anchor: 'created_at', seconds: 3600 },
      });
      validFile(expiring);
      expect(expiring.expires_at).toEqual(expect.any(Number));
    },
    SLOW_TEST_MS,
  );
});
