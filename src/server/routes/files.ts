/**
 * `/v1/files`: uploads streamed to the BlobStore (multipart, never held whole in memory), list, get,
 * contents (streamed) and delete. Files belong to the caller's workspace. A `batch` file's bytes are
 * counted as it arrives, and it is read once more right after, its requests counted by the batch reader's
 * rule: every line must be blank or JSON, so a batch made from it fails only on what a line asks, not on
 * its syntax. With `x-gateway-files: provider` the provider's own Files API answers instead
 * (provider-files.ts).
 */
import { isUtf8 } from 'node:buffer';
import { pipeline, Transform } from 'node:stream';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../core/errors.js';
import { fileKey } from '../../gateway/batches/batch-phases.js';
import { jsonlRequestLines, LineTooLong } from '../../gateway/batches/jsonl-lines.js';
import type { GatewayDeps } from '../../gateway/deps.js';
import { UPLOAD_PURPOSES, type FilePurpose, type StoredFile } from '../../store/file-batch-types.js';
import { newId } from '../../store/ids.js';
import { FILE_LIST } from './file-batch-operations.js';
import { FILE_EXPIRY_MAX_SECONDS, FILE_EXPIRY_MIN_SECONDS } from './file-expiry.js';
import { notFound, pathParam } from './management/route-helpers.js';
import { answeredByProvider } from './provider-files.js';
import {
  afterCursor,
  integerQuery,
  listObject,
  oneOfQuery,
  stringQuery,
  type Query,
} from './query-params.js';

/** The file object of the API (OpenAI's shape; `status` is deprecated and always `processed`). */
export function fileView(file: StoredFile) {
  return {
    id: file.id,
    object: 'file' as const,
    bytes: file.bytes,
    created_at: file.created_at,
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed' as const,
    status_details: null,
    expires_at: file.expires_at ?? null,
  };
}

const MAX_FILENAME = 255;

/** The name kept for an upload: at most MAX_FILENAME UTF-16 units, never ending in half a character (a
 * lone surrogate, which strict JSON decoders refuse in every answer naming the file); `file` when none. */
function filenameOf(name: string | undefined): string {
  // A file part may come without a file name (its Content-Type says it is a file): RFC 7578 allows it.
  let cut = (name ?? '').slice(0, MAX_FILENAME);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return cut || 'file';
}

/** Counts the bytes of what passes through. */
class ByteCounter extends Transform {
  bytes = 0;

  override _transform(
    chunk: Buffer,
    _encoding: BufferEncoding,
    done: (error?: Error | null, data?: Buffer) => void,
  ) {
    this.bytes += chunk.byteLength;
    done(null, chunk);
  }
}

function purposeOf(value: string | undefined): FilePurpose {
  if (!value) throw new GatewayError('invalid_body', 'purpose is required', { param: 'purpose' });
  if (!(UPLOAD_PURPOSES as readonly string[]).includes(value)) {
    throw new GatewayError('invalid_body', `purpose must be one of ${UPLOAD_PURPOSES.join(', ')}`, {
      param: 'purpose',
    });
  }
  return value as FilePurpose;
}

/** What reading a stored batch file found: its requests (the lines that are not blank, which a batch made
 * from it runs), or the first line that is not UTF-8, not JSON or longer than a request body may be
 * (1-based), and what is wrong with it. More requests than a batch file holds are refused as they come. */
type BatchFileLines = { requests: number } | { line: number; fault: string };

async function readBatchFile(deps: GatewayDeps, key: string): Promise<BatchFileLines> {
  const input = await deps.blobs.get(key);
  if (!input) throw new GatewayError('internal_error', 'The uploaded file cannot be read back');
  const { batchMaxLines, bodyLimitBytes } = deps.settings;
  let requests = 0;
  try {
    // A line is a request whose body a direct call would refuse past the body limit; bounded, a line is
    // never held in memory past it either. Blank lines are told apart as the batch reader tells them.
    for await (const { number, bytes } of jsonlRequestLines(input, bodyLimitBytes)) {
      requests += 1;
      if (requests > batchMaxLines) {
        throw new GatewayError('invalid_body', `A batch file holds at most ${batchMaxLines} requests`, {
          param: 'file',
        });
      }
      // Decoded, a byte that is not UTF-8 would become U+FFFD: a custom_id the client never sent.
      if (!isUtf8(bytes)) return { line: number, fault: 'is not UTF-8 text' };
      try {
        JSON.parse(bytes.toString('utf8'));
      } catch {
        return { line: number, fault: 'is not valid JSON' };
      }
    }
  } catch (err) {
    if (!(err instanceof LineTooLong)) throw err;
    return {
      line: err.line,
      fault: `is longer than ${err.maxBytes} bytes, the largest request body (GATEWAY_BODY_LIMIT_BYTES)`,
    };
  } finally {
    input.destroy();
  }
  return { requests };
}

interface Upload {
  filename: string;
  bytes: number;
}

const ONE_FILE = 'Send one file, in the field "file"';

/**
 * What a multipart body that could not be read is answered with: the parser's own limits and refusals (a
 * second file, a body without a boundary or cut off before its end) as a 400 naming the file.
 */
function uploadError(err: unknown): unknown {
  if (err instanceof GatewayError) return err;
  const code = (err as { code?: unknown }).code;
  if (code === 'FST_FILES_LIMIT') return new GatewayError('invalid_body', ONE_FILE, { param: 'file' });
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') {
    return new GatewayError('invalid_body', 'Send the fields purpose and file: the form has too many parts', {
      param: 'file',
    });
  }
  if (code === 'FST_PROTO_VIOLATION') {
    return new GatewayError('invalid_body', 'A form field has a forbidden name', { param: 'file' });
  }
  // The body's own faults: the parser's plain errors ("Unexpected end of multipart data", "Boundary not
  // found") and a part cut off by its client. Anything else is the gateway's failure, a 500 that the error
  // handler logs: the storage's (a system call's, S3's) and a TypeError or RangeError of its own code.
  const bodyFault =
    err instanceof Error &&
    (code === 'ERR_STREAM_PREMATURE_CLOSE' ||
      (code === undefined &&
        Object.getPrototypeOf(err) === Error.prototype &&
        !('syscall' in err) &&
        !('$metadata' in err)));
  if (!bodyFault) return err;
  const message = err.message;
  return new GatewayError(
    'invalid_body',
    `The upload is not a complete multipart/form-data body: ${message}`,
    {
      param: 'file',
    },
  );
}

async function receive(deps: GatewayDeps, request: FastifyRequest, key: string) {
  try {
    return await receiveParts(deps, request, key);
  } catch (err) {
    throw uploadError(err);
  }
}

async function receiveParts(deps: GatewayDeps, request: FastifyRequest, key: string) {
  let upload: Upload | undefined;
  let purpose: string | undefined;
  const expiry = new Map<string, string>();
  for await (const part of request.parts()) {
    if (part.type === 'field') {
      if (part.fieldname === 'purpose') purpose = String(part.value);
      else if (part.fieldname.startsWith('expires_after')) expiry.set(part.fieldname, String(part.value));
      continue;
    }
    if (part.fieldname !== 'file' || upload) {
      part.file.resume();
      throw new GatewayError('invalid_body', ONE_FILE, { param: 'file' });
    }
    const counter = new ByteCounter();
    // pipeline, not pipe: a file part that ends in an error (the body cut off, the client gone) ends the
    // store's write with it, and the write removes what it had kept.
    await deps.blobs.put(
      key,
      pipeline(part.file, counter, () => undefined),
    );
    if (part.file.truncated) {
      throw new GatewayError(
        'payload_too_large',
        `A file holds at most ${deps.settings.fileMaxBytes} bytes`,
        {
          param: 'file',
        },
      );
    }
    upload = {
      filename: filenameOf(part.filename),
      bytes: counter.bytes,
    };
  }
  return { upload, purpose, expiresAfter: expiresAfterOf(expiry) };
}

/**
 * OpenAI's `expires_after` of an upload, as the form fields `expires_after[anchor]` (`created_at`) and
 * `expires_after[seconds]`: the seconds after its creation the file expires; undefined when not asked.
 */
function expiresAfterOf(fields: ReadonlyMap<string, string>): number | undefined {
  if (fields.size === 0) return undefined;
  const known = new Set(['expires_after[anchor]', 'expires_after[seconds]']);
  const unknown = [...fields.keys()].find((name) => !known.has(name));
  if (unknown !== undefined) {
    throw new GatewayError(
      'invalid_body',
      `Unknown field ${unknown}: expires_after takes anchor and seconds`,
      {
        param: 'expires_after',
      },
    );
  }
  if (fields.get('expires_after[anchor]') !== 'created_at') {
    throw new GatewayError('invalid_body', 'expires_after.anchor must be created_at', {
      param: 'expires_after.anchor',
    });
  }
  const raw = fields.get('expires_after[seconds]') ?? '';
  const seconds = Number(raw);
  if (!/^\d{1,8}$/.test(raw) || seconds < FILE_EXPIRY_MIN_SECONDS || seconds > FILE_EXPIRY_MAX_SECONDS) {
    throw new GatewayError(
      'invalid_body',
      `expires_after.seconds must be an integer from ${FILE_EXPIRY_MIN_SECONDS} to ${FILE_EXPIRY_MAX_SECONDS}`,
      { param: 'expires_after.seconds' },
    );
  }
  return seconds;
}

/** A batch file's requests, once it is found within the bounds of one and every line of it JSON. */
async function checkBatchFile(deps: GatewayDeps, key: string, upload: Upload): Promise<number> {
  const { batchFileMaxBytes } = deps.settings;
  if (upload.bytes > batchFileMaxBytes) {
    throw new GatewayError('payload_too_large', `A batch file holds at most ${batchFileMaxBytes} bytes`, {
      param: 'file',
    });
  }
  const read = await readBatchFile(deps, key);
  if ('fault' in read) {
    throw new GatewayError('invalid_body', `Line ${read.line} of the batch file ${read.fault}`, {
      param: 'file',
    });
  }
  return read.requests;
}

export async function registerFileRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(multipart, {
      limits: { fileSize: deps.settings.fileMaxBytes, files: 1, fields: 8, fieldSize: 1024, parts: 10 },
    });

    scope.post('/files', async (request, reply) => {
      // Before the provider is asked too: the body of any other type has been read (and parsed) already,
      // so there would be nothing left to stream to it.
      if (!request.isMultipart()) {
        throw new GatewayError('unsupported_media_type', 'Upload a file as multipart/form-data', {
          param: 'file',
        });
      }
      if (await answeredByProvider(deps, request, reply)) return reply;
      const now = Date.now();
      const id = newId('file', now);
      const key = fileKey(id);
      try {
        const { upload, purpose: purposeField, expiresAfter } = await receive(deps, request, key);
        if (!upload) throw new GatewayError('invalid_body', 'file is required', { param: 'file' });
        const purpose = purposeOf(purposeField);
        const requests = purpose === 'batch' ? await checkBatchFile(deps, key, upload) : null;
        const file = await deps.store.files.create({
          id,
          workspace_id: request.gw.apiKey.workspace_id,
          purpose,
          filename: upload.filename,
          bytes: upload.bytes,
          line_count: requests,
          created_at: Math.floor(now / 1000),
          expires_at: expiresAfter === undefined ? null : Math.floor(now / 1000) + expiresAfter,
        });
        return fileView(file);
      } catch (err) {
        await deps.blobs.delete(key).catch(() => undefined);
        throw err;
      }
    });
  });

  app.get('/files', async (request, reply) => {
    if (await answeredByProvider(deps, request, reply)) return reply;
    const query = request.query as Query;
    // An empty purpose (a templated URL's `?purpose=`) filters nothing, as an empty `after` or `order`.
    const purpose = stringQuery(query, 'purpose', 64) || undefined;
    const limit = integerQuery(query, 'limit', 1, FILE_LIST.maxLimit, FILE_LIST.defaultLimit);
    const order = oneOfQuery(query, 'order', ['asc', 'desc'] as const, FILE_LIST.defaultOrder);
    const after = afterCursor(query);
    const page = await deps.store.files.list(request.gw.apiKey.workspace_id, {
      purpose,
      limit,
      order,
      after,
    });
    return listObject(page.data.map(fileView), page.has_more);
  });

  async function fileOf(request: FastifyRequest): Promise<StoredFile> {
    const id = pathParam(request.params, 'fileId');
    const file = await deps.store.files.get(request.gw.apiKey.workspace_id, id);
    if (!file) throw notFound('file', id, 'file_id');
    return file;
  }

  app.get('/files/:fileId', async (request, reply) => {
    if (await answeredByProvider(deps, request, reply)) return reply;
    return fileView(await fileOf(request));
  });

  /** A file's content headers; a file whose contents are gone from the storage is not found. */
  function contentHeaders(reply: FastifyReply, file: StoredFile, present: unknown): FastifyReply {
    if (!present) throw notFound('file content of', file.id, 'file_id');
    return reply
      .type(file.filename.endsWith('.jsonl') ? 'application/jsonl' : 'application/octet-stream')
      .header('content-length', String(file.bytes));
  }

  // HEAD answers the headers from the file's record and the storage's stat, opening no stream of the
  // contents (Fastify's own HEAD of a GET runs the GET and drops its body).
  app.get('/files/:fileId/content', { exposeHeadRoute: false }, async (request, reply) => {
    if (await answeredByProvider(deps, request, reply)) return reply;
    const file = await fileOf(request);
    const content = await deps.blobs.get(fileKey(file.id));
    return contentHeaders(reply, file, content).send(content);
  });

  app.head('/files/:fileId/content', async (request, reply) => {
    if (await answeredByProvider(deps, request, reply)) return reply;
    const file = await fileOf(request);
    return contentHeaders(reply, file, await deps.blobs.stat(fileKey(file.id))).send();
  });

  app.delete('/files/:fileId', async (request, reply) => {
    if (await answeredByProvider(deps, request, reply)) return reply;
    const file = await fileOf(request);
    await deps.store.files.delete(file.workspace_id, file.id);
    await deps.blobs.delete(fileKey(file.id));
    return { id: file.id, object: 'file' as const, deleted: true };
  });
}
