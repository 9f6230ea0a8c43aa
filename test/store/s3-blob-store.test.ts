/** Blobs in an S3-compatible bucket (s3rver on loopback): a put whose source fails keeps nothing and ends. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createS3BlobStore, type S3BlobStore } from '../../src/store/s3-blob-store.js';
import { startS3, type TestS3 } from '../helpers/s3.js';

let s3: TestS3;
let blobs: S3BlobStore;

beforeAll(async () => {
  s3 = await startS3();
  blobs = await createS3BlobStore({
    bucket: s3.bucket,
    prefix: 'test/',
    region: 'us-east-1',
    endpoint: s3.endpoint,
    forcePathStyle: true,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
  });
});

afterAll(async () => {
  blobs?.close();
  await s3?.close();
});

it('fails a put whose source fails midway (a client gone, a store read refused) instead of waiting for ever', async () => {
  async function* source(): AsyncIterable<Uint8Array> {
    yield Buffer.from('{"a":1}\n'.repeat(1000));
    await new Promise((resolve) => setTimeout(resolve, 20));
    throw new Error('client went away');
  }
  const outcome = await Promise.race([
    blobs.put('files/file_broken', source()).then(
      () => 'stored',
      (err: unknown) => (err as Error).message,
    ),
    new Promise((resolve) => setTimeout(() => resolve('still waiting'), 5_000)),
  ]);
  expect(outcome).toBe('client went away');
  expect(await blobs.get('files/file_broken')).toBeUndefined();
  // The store still takes the next put.
  await blobs.put('files/file_whole', Buffer.from('whole'));
  expect(await blobs.stat('files/file_whole')).toMatchObject({ bytes: 5 });
});
