/**
 * File contents (uploaded files, batch inputs and outputs): one interface, a local directory now, shared
 * storage (an S3-compatible store or PostgreSQL) when nodes scale out. Blobs are streamed in and out,
 * never held whole in memory. Keys are built by the gateway's code from ids (`files/<id>`), never taken
 * from a request as they are.
 */
import type { Readable } from 'node:stream';
import type { AbortSignalLike } from '../core/abort.js';
import { GatewayError } from '../core/errors.js';

export type BlobData = Uint8Array | AsyncIterable<Uint8Array> | Readable;

export interface StoredBlob {
  bytes: number;
  /** Hex SHA-256 of the contents, when the implementation computes it. */
  sha256?: string;
}

export interface BlobStat {
  bytes: number;
  modified_at_ms: number;
}

export interface BlobStore {
  /** Stores `data` under `key`, replacing any blob there. Readers see the old blob or the whole new one,
   * never part of it; a failed put leaves the old blob in place. `signal` (its node's stop) fails a put
   * under way at once, the storage unanswering included. */
  put(key: string, data: BlobData, signal?: AbortSignalLike): Promise<StoredBlob>;
  /** A stream of the blob's bytes, or undefined when there is none. A blob replaced or deleted while
   * it is read keeps streaming the contents it had when `get` answered. */
  get(key: string): Promise<Readable | undefined>;
  /** false when there was no blob. */
  delete(key: string): Promise<boolean>;
  stat(key: string): Promise<BlobStat | undefined>;
}

const MAX_KEY_LENGTH = 512;
/** Starts with a letter or digit: no `.`/`..`, no hidden names (the implementation's own files). */
const KEY_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** `a/b/c.jsonl`: segments of letters, digits, `.`, `_`, `-`, each starting with a letter or digit. No
 * absolute paths, no `..`, no backslashes, no empty segments. */
export function blobKeySegments(key: string): string[] {
  const segments = key.split('/');
  if (
    key.length === 0 ||
    key.length > MAX_KEY_LENGTH ||
    !segments.every((segment) => KEY_SEGMENT.test(segment))
  ) {
    throw new GatewayError('internal_error', `Invalid blob key: ${JSON.stringify(key.slice(0, 100))}`);
  }
  return segments;
}
