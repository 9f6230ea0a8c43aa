/**
 * A gateway file (`file_…` of `/v1/files`) sent to a provider's Files API, at most once per provider
 * account: the first use claims the upload in the store (`provider_files`), streams the file from the blob
 * store as `multipart/form-data`, and remembers the provider's id; later uses, on any node, get that id. A
 * use that finds another node uploading waits for it; a claim left by a node that died is taken over once
 * stale. The uploading node renews its claim while the file's bytes move, so an honest upload that takes
 * longer than that is never taken over (and the file sent twice). An id the gateway does not know (a provider's own `file-…`) is passed on as it is.
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AbortSignalLike } from '../../core/abort.js';
import { GatewayError, ProviderError } from '../../core/errors.js';
import type { StoredFile } from '../../store/file-batch-types.js';
import { fileKey } from '../batches/batch-phases.js';
import { blankLine, BOM, jsonlLineBytes } from '../batches/jsonl-lines.js';
import type { GatewayDeps } from '../deps.js';
import { callResource } from './resource-client.js';
import type { ResourceTarget } from './resource-target.js';

/** A claim on an upload not renewed for this long is taken over (its node is gone). */
const STALE_CLAIM_MS = 10 * 60_000;
/** How often an upload whose bytes move renews its claim: well within STALE_CLAIM_MS. A stalled transfer
 * renews nothing, and is cut after GATEWAY_FILE_TRANSFER_IDLE_TIMEOUT_MS. */
const RENEW_CLAIM_MS = STALE_CLAIM_MS / 4;
const WAIT_STEP_MS = 250;

/** The gateway file `fileId` names, checked: 404 when the workspace has no such file, 400 when it was
 * uploaded for another purpose (both naming `param`). Undefined for an id that is not a gateway file's (a
 * provider's own `file-…`, passed on as it is). Check every file of a request before sending any. */
export async function gatewayFileOf(
  deps: GatewayDeps,
  workspaceId: string,
  fileId: string,
  purpose: string,
  param: string,
): Promise<StoredFile | undefined> {
  if (!fileId.startsWith('file_')) return undefined;
  const file = await deps.store.files.get(workspaceId, fileId);
  if (!file) {
    throw new GatewayError('not_found', `No file ${fileId} in this workspace`, { param });
  }
  if (file.purpose !== purpose) {
    throw new GatewayError(
      'invalid_body',
      `File ${file.id} was uploaded with purpose "${file.purpose}", not "${purpose}"`,
      { param },
    );
  }
  return file;
}

/** A use stopped waiting for another node's upload of the file (its caller's signal): 408. */
export class UploadWaitEnded extends GatewayError {
  constructor(fileId: string, provider: string, param: string) {
    super('request_timeout', `File ${fileId} is still being sent to ${provider}`, { param });
  }
}

/** The provider's copy of a gateway file in the target's account. */
export interface ProviderCopy {
  id: string;
  /** Remembered from an earlier upload rather than sent now. */
  known: boolean;
}

/** The provider's copy of `file` in the target's account: the one remembered, else uploaded now. */
export async function providerCopy(
  deps: GatewayDeps,
  target: ResourceTarget,
  file: StoredFile,
  purpose: string,
  param: string,
  rewriteLine?: LineRewrite,
  /** The caller's own deadline (its client gone, its job cancelled): waiting for another node ends then. */
  signal?: AbortSignalLike,
  /** This node's stop: its own upload of the file ends then too, and its claim is given back, so that the
   * next node sends the file at once instead of waiting for the claim to go stale. */
  stop?: AbortSignalLike,
): Promise<ProviderCopy> {
  const { providerFiles } = deps.store;
  // Another node's claim is waited for as long as it is renewed, however long its upload takes; one that
  // lapses is taken over by the claim itself.
  for (;;) {
    const claim = await providerFiles.claim(file.id, target.account, target.adapter.id, STALE_CLAIM_MS);
    if (claim.state === 'known') return { id: claim.provider_file_id, known: true };
    if (claim.state === 'claimed') {
      const held = { at: claim.claimed_at_ms, renewed: Date.now() };
      const moved = async () => {
        if (Date.now() - held.renewed < RENEW_CLAIM_MS) return;
        held.renewed = Date.now();
        try {
          held.at = (await providerFiles.renew(file.id, target.account, held.at)) ?? held.at;
        } catch (err) {
          // A store that cannot be written now is tried again as the next bytes move.
          deps.logger.warn({ err, file: file.id }, 'renewing the claim of a file upload failed');
        }
      };
      try {
        const id = await uploadFile(deps, target, file, purpose, rewriteLine, moved, stop);
        await providerFiles.remember(file.id, target.account, held.at, id);
        return { id, known: false };
      } catch (err) {
        await providerFiles.release(file.id, target.account, held.at).catch(() => undefined);
        throw err;
      }
    }
    if (signal?.aborted || stop?.aborted) throw new UploadWaitEnded(file.id, target.adapter.id, param);
    await sleep(WAIT_STEP_MS);
  }
}

/** A gateway file that a provider's create call names in its field `param`. */
export interface FileToSend<P extends string = string> {
  param: P;
  file: StoredFile;
  /** How its lines change on the way (a batch line's `url` for Azure). */
  rewriteLine?: LineRewrite;
}

/** A file to send, with the provider's copy of it. */
export type SentFile<P extends string = string> = FileToSend<P> & { copy: ProviderCopy };

async function copiesOf<P extends string>(
  deps: GatewayDeps,
  target: ResourceTarget,
  purpose: string,
  files: Array<FileToSend<P>>,
  signal: AbortSignalLike | undefined,
  stop: AbortSignalLike | undefined,
): Promise<Array<SentFile<P>>> {
  const sent: Array<SentFile<P>> = [];
  for (const named of files) {
    const { file, param, rewriteLine } = named;
    const copy = await providerCopy(deps, target, file, purpose, param, rewriteLine, signal, stop);
    sent.push({ ...named, copy });
  }
  return sent;
}

/** Whether the provider has lost its copy `copyId` of gateway file `fileId` (its Files API answers 404
 * for it); a lost copy is forgotten, so that the next use sends the file again. */
async function forgetLostCopy(
  deps: GatewayDeps,
  target: ResourceTarget,
  fileId: string,
  copyId: string,
): Promise<boolean> {
  try {
    await callResource(deps, target, { method: 'GET', path: `/files/${encodeURIComponent(copyId)}` });
    return false;
  } catch (err) {
    if (!(err instanceof ProviderError) || err.status !== 404) return false;
  }
  await deps.store.providerFiles.forget(fileId, target.account, copyId);
  return true;
}

/**
 * Creates something at the provider (a fine-tuning job, a batch) that names gateway files: `create` is
 * called with each file's copy at the provider (sent now when it has none). A copy remembered from an
 * earlier use may have been lost there since (deleted in the provider's dashboard, or by its retention),
 * which the provider reports as an unknown file the user never named: when it refuses the create (400 or
 * 404) and a copy came from earlier, its Files API is asked for those copies; the lost ones are forgotten,
 * sent again, and the create is tried once more. Resolves with the answer and the copies it was given.
 */
export async function createWithCopies<T, P extends string>(
  deps: GatewayDeps,
  target: ResourceTarget,
  purpose: string,
  files: Array<FileToSend<P>>,
  create: (sent: Array<SentFile<P>>) => Promise<T>,
  /** Ends a wait for another node's upload (providerCopy). */
  signal?: AbortSignalLike,
  /** Ends this node's own uploads too (providerCopy); never `create`, whose work the provider may have done
   * by then. */
  stop?: AbortSignalLike,
): Promise<{ answer: T; sent: Array<SentFile<P>> }> {
  const first = await copiesOf(deps, target, purpose, files, signal, stop);
  try {
    return { answer: await create(first), sent: first };
  } catch (err) {
    if (!(err instanceof ProviderError) || (err.status !== 400 && err.status !== 404)) throw err;
    let forgot = false;
    for (const { file, copy } of first) {
      if (copy.known && (await forgetLostCopy(deps, target, file.id, copy.id))) forgot = true;
    }
    if (!forgot) throw err;
  }
  const sent = await copiesOf(deps, target, purpose, files, signal, stop);
  return { answer: await create(sent), sent };
}

function quoted(value: string): string {
  return value.replace(/["\r\n\\]/g, '_');
}

/** Changes one line of a JSONL file on its way to the provider (a batch line's `url` for Azure). */
export type LineRewrite = (line: string) => string;

const LF = Buffer.from('\n');

/** The file's lines rewritten, split by the rule the upload counted them by (jsonl-lines.ts): a lone `\r`
 * inside a line is not a break, a byte order mark is not part of the first line, and a blank line is
 * copied as it is. */
async function* rewritten(content: Readable, rewrite: LineRewrite): AsyncGenerator<Uint8Array> {
  for await (const line of jsonlLineBytes(content)) {
    yield blankLine(line) ? Buffer.concat([line, LF]) : Buffer.from(`${rewrite(line.toString('utf8'))}\n`);
  }
}

/**
 * The file's bytes without a byte order mark at its start, and how many they are: the gateway's JSONL
 * reader skips the mark (jsonl-lines.ts), a provider reading the first line as JSON would not.
 */
async function withoutBom(
  stored: Readable,
  size: number,
): Promise<{ content: AsyncIterable<Uint8Array>; bytes: number }> {
  const chunks = stored[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first = await chunks.next();
  const head = first.done ? Buffer.alloc(0) : first.value;
  const marked = head.subarray(0, BOM.byteLength).equals(BOM);
  async function* content(): AsyncGenerator<Uint8Array> {
    yield marked ? head.subarray(BOM.byteLength) : head;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
  }
  return { content: content(), bytes: marked ? size - BOM.byteLength : size };
}

/** Streams the file to the provider's `POST /files`; resolves with the provider's file id. `moved` is
 * awaited as each chunk of the file goes; `signal` cuts the transfer. */
export async function uploadFile(
  deps: GatewayDeps,
  target: ResourceTarget,
  file: Pick<StoredFile, 'id' | 'filename' | 'bytes'>,
  purpose: string,
  rewriteLine?: LineRewrite,
  moved?: () => Promise<void>,
  signal?: AbortSignalLike,
): Promise<string> {
  const stored = await deps.blobs.get(fileKey(file.id));
  if (!stored) throw new GatewayError('not_found', `The contents of file ${file.id} are gone`);
  const { content, bytes } = rewriteLine
    ? { content: rewritten(stored, rewriteLine), bytes: undefined }
    : await withoutBom(stored, file.bytes);
  const boundary = `----gateway${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\n${purpose}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quoted(file.filename)}"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* body(): AsyncGenerator<Uint8Array> {
    yield head;
    for await (const chunk of content) {
      if (moved) await moved();
      yield chunk;
    }
    yield tail;
  }
  const answer = await callResource(
    deps,
    target,
    {
      method: 'POST',
      path: '/files',
      transfer: true,
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        // A rewritten file's length is known only once sent: then it goes chunked.
        ...(bytes !== undefined && { 'content-length': String(head.length + bytes + tail.length) }),
      },
      body: body(),
    },
    signal,
  ).finally(() => {
    // A send that ended before it read the file to its end (the provider unreachable, a refusal, the
    // transfer cut) would leave the blob's download open: on S3 it holds one of the client's sockets for
    // good, and once they are all held every read and write of the blob storage waits.
    stored.destroy();
  });
  if (typeof answer.id !== 'string') {
    throw new GatewayError(
      'upstream_invalid_response',
      `${target.adapter.id} answered the upload without a file id`,
    );
  }
  return answer.id;
}
