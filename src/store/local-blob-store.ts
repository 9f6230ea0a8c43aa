/**
 * Blobs as files under one directory (`<GATEWAY_DATA_DIR>/blobs` in the gateway). A put writes a temporary
 * file in `<directory>/.tmp`, flushes it to disk and renames it into place: rename is atomic on one file
 * system, so a reader opens either the old file or the complete new one. Keys map to paths below the
 * directory and can never leave it (see `blobKeySegments`).
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join, relative, resolve, isAbsolute } from 'node:path';
import type { Readable } from 'node:stream';
import { GatewayError } from '../core/errors.js';
import { blobKeySegments, type BlobData, type BlobStore } from './blob-store.js';

const TEMP_DIR = '.tmp';

function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

async function* chunksOf(data: BlobData): AsyncIterable<Uint8Array> {
  if (data instanceof Uint8Array) {
    yield data;
    return;
  }
  for await (const chunk of data as AsyncIterable<Uint8Array | string>) {
    // A Readable made from strings yields strings.
    yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  }
}

function stoppedError(): Error {
  return Object.assign(new Error('The blob was not stored: its writer stopped'), { name: 'AbortError' });
}

export function createLocalBlobStore(directory: string): BlobStore {
  const root = resolve(directory);

  function pathOf(key: string): string {
    const path = join(root, ...blobKeySegments(key));
    // The key rules already keep paths inside; this keeps it so should they ever change.
    const inside = relative(root, path);
    if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
      throw new GatewayError('internal_error', `Blob key escapes the blob directory: ${key}`);
    }
    return path;
  }

  return {
    async put(key, data, signal) {
      const target = pathOf(key);
      const tempDir = join(root, TEMP_DIR);
      await Promise.all([mkdir(dirname(target), { recursive: true }), mkdir(tempDir, { recursive: true })]);
      const temp = join(tempDir, randomUUID());
      const hash = createHash('sha256');
      let bytes = 0;
      const file = await open(temp, 'wx', 0o600);
      try {
        for await (const chunk of chunksOf(data)) {
          if (signal?.aborted) throw stoppedError();
          hash.update(chunk);
          bytes += chunk.byteLength;
          await file.write(chunk);
        }
        // On disk before it gets its name, so a crash cannot leave an empty file under the key.
        await file.sync();
        await file.close();
        await rename(temp, target);
      } catch (error) {
        await file.close().catch(() => undefined);
        await rm(temp, { force: true });
        throw error;
      }
      return { bytes, sha256: hash.digest('hex') };
    },

    async get(key) {
      const path = pathOf(key);
      let file;
      try {
        file = await open(path, 'r');
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
      // Open first, then stream: a put or delete after this point does not change what is read.
      if (!(await file.stat()).isFile()) {
        await file.close();
        return undefined;
      }
      return file.createReadStream() as Readable;
    },

    async delete(key) {
      try {
        await unlink(pathOf(key));
        return true;
      } catch (error) {
        if (isMissing(error)) return false;
        throw error;
      }
    },

    async stat(key) {
      try {
        const info = await stat(pathOf(key));
        return info.isFile() ? { bytes: info.size, modified_at_ms: info.mtimeMs } : undefined;
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
    },
  };
}
