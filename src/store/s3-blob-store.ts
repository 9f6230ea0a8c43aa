/**
 * Blobs in an S3-compatible bucket (AWS S3, MinIO, R2, …): what nodes that scale out share. A put streams
 * the data in parts (`@aws-sdk/lib-storage`), and S3 makes an object visible only once it is complete,
 * so readers see the old object or the whole new one. The AWS SDK is loaded when the store is created,
 * so a gateway that keeps its files on local disk never loads it.
 */
import { createHash } from 'node:crypto';
import { pipeline, Readable, Transform } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { blobKeySegments, type BlobData, type BlobStore } from './blob-store.js';

export interface S3BlobStoreOptions {
  bucket: string;
  prefix: string;
  region: string;
  endpoint: string | undefined;
  forcePathStyle: boolean;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
}

/** Bytes per uploaded part (S3's least is 5 MiB); at most this times `QUEUE` is held in memory. */
const PART_BYTES = 8 * 1024 * 1024;
const QUEUE = 2;

function isMissing(error: unknown): boolean {
  const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return name === 'NoSuchKey' || name === 'NotFound' || $metadata?.httpStatusCode === 404;
}

function readableOf(data: BlobData): Readable {
  if (data instanceof Uint8Array) return Readable.from([Buffer.from(data)]);
  return data instanceof Readable ? data : Readable.from(data);
}

export interface S3BlobStore extends BlobStore {
  close(): void;
}

export async function createS3BlobStore(options: S3BlobStoreOptions): Promise<S3BlobStore> {
  const [s3, storage] = await Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]);
  const client: S3Client = new s3.S3Client({
    region: options.region,
    endpoint: options.endpoint,
    forcePathStyle: options.forcePathStyle,
    ...(options.accessKeyId &&
      options.secretAccessKey && {
        credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
      }),
  });
  const keyOf = (key: string) => options.prefix + blobKeySegments(key).join('/');
  const Bucket = options.bucket;

  async function head(key: string) {
    try {
      return await client.send(new s3.HeadObjectCommand({ Bucket, Key: keyOf(key) }));
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  return {
    async put(key, data, signal) {
      const hash = createHash('sha256');
      let bytes = 0;
      const counted = new Transform({
        transform(chunk: Buffer | string, _encoding, done) {
          const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          hash.update(buffer);
          bytes += buffer.byteLength;
          done(null, buffer);
        },
      });
      // pipeline, not pipe: a source that fails (an upload's client gone, a store read refused) fails
      // the upload with its error, which then aborts the multipart upload. Piped, the upload waited for
      // the rest of the body for ever, and so did the request or job that put it.
      pipeline(readableOf(data), counted, () => undefined);
      const upload = new storage.Upload({
        client,
        params: { Bucket, Key: keyOf(key), Body: counted },
        partSize: PART_BYTES,
        queueSize: QUEUE,
      });
      if (signal?.aborted) {
        counted.destroy();
        throw Object.assign(new Error('The blob was not stored: its writer stopped'), { name: 'AbortError' });
      }
      // Aborted, the upload fails at once, however long S3 would take to answer (never, when it hangs).
      const stop = () => void upload.abort();
      signal?.addEventListener('abort', stop);
      try {
        await upload.done();
      } catch (error) {
        // S3 refused: the source is not read any further.
        counted.destroy();
        throw error;
      } finally {
        signal?.removeEventListener('abort', stop);
      }
      return { bytes, sha256: hash.digest('hex') };
    },

    async get(key) {
      try {
        const answer = await client.send(new s3.GetObjectCommand({ Bucket, Key: keyOf(key) }));
        return answer.Body as Readable | undefined;
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
    },

    async delete(key) {
      if (!(await head(key))) return false;
      await client.send(new s3.DeleteObjectCommand({ Bucket, Key: keyOf(key) }));
      return true;
    },

    async stat(key) {
      const info = await head(key);
      if (!info) return undefined;
      return { bytes: info.ContentLength ?? 0, modified_at_ms: info.LastModified?.getTime() ?? 0 };
    },

    close() {
      client.destroy();
    },
  };
}
