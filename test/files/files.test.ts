/**
 * `/v1/files` with the official `openai` SDK, on the local blob directory and on S3-compatible storage
 * (s3rver on loopback): upload (streamed), list (purpose, limit, order, after), get, content, delete;
 * files are private to their workspace; bad input is a 4xx naming the field.
 */
import { existsSync, readdirSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fileKey } from '../../src/gateway/batches/batch-phases.js';
import { chatLine, createBatch, finished, jsonl, sdk as batchClient, waitFor } from '../batches/support.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startS3, type TestS3 } from '../helpers/s3.js';

function sdk(gateway: TestGateway, apiKey = gateway.adminKey): OpenAI {
  return new OpenAI({
    baseURL: gateway.url,
    apiKey: 'unused',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': apiKey },
  });
}

async function status(promise: Promise<unknown>): Promise<{ status: number; param: string | null }> {
  const error = (await promise.then(
    () => undefined,
    (err: unknown) => err,
  )) as { status: number; error: { param: string | null } } | undefined;
  if (!error) throw new Error('the request succeeded');
  return { status: error.status, param: error.error?.param ?? null };
}

function suite(name: string, start: () => Promise<{ gateway: TestGateway; close(): Promise<void> }>) {
  describe(name, () => {
    let gateway: TestGateway;
    let close: () => Promise<void>;

    beforeAll(async () => {
      ({ gateway, close } = await start());
    });
    afterAll(async () => close?.());

    it('uploads, lists, reads, streams and deletes a file', async () => {
      const client = sdk(gateway);
      const text = '{"a":1}\n{"b":2}\n';
      const batchFile = await client.files.create({
        file: await toFile(Buffer.from(text), 'in.jsonl'),
        purpose: 'batch',
      });
      expect(batchFile).toMatchObject({
        object: 'file',
        purpose: 'batch',
        filename: 'in.jsonl',
        bytes: Buffer.byteLength(text),
        status: 'processed',
      });
      expect(batchFile.created_at).toBeGreaterThan(0);
      const image = await client.files.create({
        file: await toFile(Buffer.alloc(300_000, 7), 'picture.png'),
        purpose: 'vision',
      });
      expect(image.bytes).toBe(300_000);

      expect(await client.files.retrieve(batchFile.id)).toEqual(batchFile);
      expect(await (await client.files.content(batchFile.id)).text()).toBe(text);
      const bytes = Buffer.from(await (await client.files.content(image.id)).arrayBuffer());
      expect(bytes.equals(Buffer.alloc(300_000, 7))).toBe(true);

      const onlyBatch = await client.files.list({ purpose: 'batch' });
      expect(onlyBatch.data.map((f) => f.id)).toEqual([batchFile.id]);
      // An empty purpose (a templated URL's ?purpose=) filters nothing, as an empty order or after.
      const emptyPurpose = await fetch(`${gateway.url}/files?purpose=`, {
        headers: { 'x-gateway-api-key': gateway.adminKey },
      });
      expect(((await emptyPurpose.json()) as { data: Array<{ id: string }> }).data.map((f) => f.id)).toEqual([
        image.id,
        batchFile.id,
      ]);
      const newestFirst = await client.files.list({ limit: 1 });
      expect(newestFirst.data.map((f) => f.id)).toEqual([image.id]);
      expect(newestFirst.has_more).toBe(true);
      const oldestFirst = await client.files.list({ order: 'asc', limit: 1 });
      expect(oldestFirst.data.map((f) => f.id)).toEqual([batchFile.id]);
      const next = await client.files.list({ order: 'asc', after: batchFile.id });
      expect(next.data.map((f) => f.id)).toEqual([image.id]);

      expect(await client.files.delete(image.id)).toEqual({ id: image.id, object: 'file', deleted: true });
      expect((await status(client.files.retrieve(image.id))).status).toBe(404);
      expect((await status(client.files.content(image.id))).status).toBe(404);
    });

    it("answers HEAD of a file's content with its headers, without reading the contents", async () => {
      const client = sdk(gateway);
      const text = '{"a":1}\n';
      const file = await client.files.create({
        file: await toFile(Buffer.from(text), 'head.jsonl'),
        purpose: 'batch',
      });
      const head = (id: string) =>
        fetch(`${gateway.url}/files/${id}/content`, {
          method: 'HEAD',
          headers: { 'x-gateway-api-key': gateway.adminKey },
        });
      const reads = vi.spyOn(gateway.server.deps.blobs, 'get');
      try {
        const answer = await head(file.id);
        expect(answer.status).toBe(200);
        expect(answer.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
        expect(answer.headers.get('content-type')).toBe('application/jsonl');
        expect(await answer.text()).toBe('');
        expect((await head('file-missing')).status).toBe(404);
        // Contents gone from the storage: 404, as a GET answers.
        await gateway.server.deps.blobs.delete(fileKey(file.id));
        expect((await head(file.id)).status).toBe(404);
        expect(reads).not.toHaveBeenCalled();
      } finally {
        reads.mockRestore();
      }
      await client.files.delete(file.id);
    });

    it('keeps a long file name to 255 characters without cutting a character in two', async () => {
      const client = sdk(gateway);
      // 200 emoji: 400 UTF-16 code units, each a surrogate pair; the 255th unit is the first half of one.
      const name = `${'😀'.repeat(200)}.txt`;
      const file = await client.files.create({
        file: await toFile(Buffer.from('x'), name),
        purpose: 'vision',
      });
      const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
      expect(file.filename.length).toBeLessThanOrEqual(255);
      expect(name.startsWith(file.filename)).toBe(true);
      expect(loneSurrogate.test(file.filename)).toBe(false);
      expect((await client.files.retrieve(file.id)).filename).toBe(file.filename);
      await client.files.delete(file.id);
    });

    it('streams a file larger than the JSON body limit in and out', async () => {
      const client = sdk(gateway);
      // 40 MB: above GATEWAY_BODY_LIMIT_BYTES, and several 8 MiB parts on S3.
      const size = 40 * 1024 * 1024;
      const data = Buffer.alloc(size);
      for (let i = 0; i < size; i += 4096) data.writeUInt32LE(i, i);
      const file = await client.files.create({ file: await toFile(data, 'large.bin'), purpose: 'fine-tune' });
      expect(file.bytes).toBe(size);
      const back = Buffer.from(await (await client.files.content(file.id)).arrayBuffer());
      expect(back.length).toBe(size);
      expect(back.equals(data)).toBe(true);
      await client.files.delete(file.id);
    });

    it('refuses a batch file whose line is not JSON, and a bad purpose, naming the field', async () => {
      const client = sdk(gateway);
      expect(
        await status(
          client.files.create({
            file: await toFile(Buffer.from('{"ok":1}\nnot json\n'), 'bad.jsonl'),
            purpose: 'batch',
          }),
        ),
      ).toEqual({ status: 400, param: 'file' });
      expect(
        await status(
          client.files.create({
            file: await toFile(Buffer.from('x'), 'x.txt'),
            purpose: 'nonsense' as 'batch',
          }),
        ),
      ).toEqual({ status: 400, param: 'purpose' });
      const json = await fetch(`${gateway.url}/files`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(json.status).toBe(415);
      const badLimit = await fetch(`${gateway.url}/files?limit=0`, {
        headers: { 'x-gateway-api-key': gateway.adminKey },
      });
      expect(((await badLimit.json()) as { error: { param: string } }).error.param).toBe('limit');
      // Nothing of the refused uploads was kept.
      expect(
        (await client.files.list({ purpose: 'batch' })).data.every((f) => f.filename !== 'bad.jsonl'),
      ).toBe(true);
    });

    it('takes a batch file that starts with a UTF-8 byte order mark', async () => {
      const client = sdk(gateway);
      const line = JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: {} });
      // What Windows PowerShell's Out-File -Encoding utf8 and Notepad's "UTF-8 with BOM" write.
      const file = await client.files.create({
        file: await toFile(Buffer.from(`\uFEFF${line}\r\n`), 'bom.jsonl'),
        purpose: 'batch',
      });
      expect(file).toMatchObject({ object: 'file', purpose: 'batch', filename: 'bom.jsonl' });
      await client.files.delete(file.id);
    });

    it('refuses a batch file that is not UTF-8, naming its line, as OpenAI refuses it', async () => {
      const client = sdk(gateway);
      const line = (id: string) =>
        JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: {} });
      // Latin-1 "é" (0xE9) in a custom_id: decoded it would be U+FFFD, and the batch's answer for it would
      // carry a custom_id the client never sent.
      const [before, after] = line('café').split('é');
      const latin1 = Buffer.concat([
        Buffer.from(`${line('a')}\n${before}`),
        Buffer.from([0xe9]),
        Buffer.from(`${after}\n`),
      ]);
      const refused = await client.files
        .create({ file: await toFile(latin1, 'latin1.jsonl'), purpose: 'batch' })
        .then(
          () => undefined,
          (err: unknown) => err as { status: number; error: { param: string; message: string } },
        );
      expect(refused?.status).toBe(400);
      expect(refused?.error).toMatchObject({ param: 'file', message: expect.stringContaining('Line 2') });
      expect(refused?.error.message).toContain('UTF-8');
      expect(
        (await client.files.list({ purpose: 'batch' })).data.every((f) => f.filename !== 'latin1.jsonl'),
      ).toBe(true);
    });

    it('takes every purpose OpenAI takes on an upload: user_data (a PDF for input_file) and evals too', async () => {
      const client = sdk(gateway);
      for (const purpose of ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] as const) {
        const file = await client.files.create({
          file: await toFile(Buffer.from('{}\n'), `${purpose}.jsonl`),
          purpose,
        });
        expect(file, purpose).toMatchObject({ object: 'file', purpose, filename: `${purpose}.jsonl` });
        expect((await client.files.list({ purpose })).data.map((f) => f.id)).toContain(file.id);
        await client.files.delete(file.id);
      }
    });

    it('refuses an upload with a purpose only the gateway gives its own files, naming purpose', async () => {
      const client = sdk(gateway);
      for (const purpose of ['batch_output', 'fine-tune-results', 'assistants_output']) {
        const refused = await client.files
          .create({ file: await toFile(Buffer.from('{}\n'), 'fake.jsonl'), purpose: purpose as 'batch' })
          .then(
            () => undefined,
            (err: unknown) => err as { status: number; error: { param: string; message: string } },
          );
        expect(refused?.status, purpose).toBe(400);
        expect(refused?.error.param).toBe('purpose');
        expect(refused?.error.message).toContain('assistants, batch, fine-tune, vision, user_data, evals');
      }
      expect((await client.files.list({ purpose: 'batch_output' })).data).toEqual([]);
    });

    it('splits a batch file into lines at \\n only, as the batch reader does', async () => {
      const client = sdk(gateway);
      const line = (id: string) =>
        JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: {} });
      const crlf = await client.files.create({
        file: await toFile(Buffer.from(`${line('a')}\r\n${line('b')}\r\n`), 'crlf.jsonl'),
        purpose: 'batch',
      });
      expect(crlf.bytes).toBeGreaterThan(0);
      // A lone \r is not a line break: the upload counted one line, so two requests there are one bad line.
      expect(
        await status(
          client.files.create({
            file: await toFile(Buffer.from(`${line('a')}\r${line('b')}\n`), 'cr.jsonl'),
            purpose: 'batch',
          }),
        ),
      ).toEqual({ status: 400, param: 'file' });
    });

    it('makes an upload expire after its expires_after, checked as OpenAI checks it', async () => {
      const client = sdk(gateway);
      const upload = async (expiresAfter: unknown) =>
        client.files.create({
          file: await toFile(Buffer.from('pixels'), 'p.png'),
          purpose: 'vision',
          expires_after: expiresAfter,
        } as never);
      const file = await upload({ anchor: 'created_at', seconds: 3600 });
      expect(file.expires_at).toBe(file.created_at + 3600);
      expect((await client.files.retrieve(file.id)).expires_at).toBe(file.created_at + 3600);
      for (const [expiresAfter, param] of [
        [{ anchor: 'created_at', seconds: 60 }, 'expires_after.seconds'],
        [{ anchor: 'created_at', seconds: 2_592_001 }, 'expires_after.seconds'],
        [{ anchor: 'created_at', seconds: 'soon' }, 'expires_after.seconds'],
        [{ anchor: 'created_at' }, 'expires_after.seconds'],
        [{ anchor: 'last_active_at', seconds: 3600 }, 'expires_after.anchor'],
        [{ seconds: 3600 }, 'expires_after.anchor'],
      ] as const) {
        expect(await status(upload(expiresAfter)), param).toEqual({ status: 400, param });
      }
      await client.files.delete(file.id);
    });

    it('keeps files private to their workspace', async () => {
      const admin = sdk(gateway);
      const file = await admin.files.create({
        file: await toFile(Buffer.from('secret'), 's.txt'),
        purpose: 'vision',
      });
      const made = await fetch(`${gateway.url}/workspaces`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Other', slug: `other-${Date.now()}` }),
      });
      expect(made.status).toBe(200);
      const { admin_key } = (await made.json()) as { admin_key: { key: string } };
      const other = sdk(gateway, admin_key.key);
      expect((await status(other.files.retrieve(file.id))).status).toBe(404);
      expect((await status(other.files.content(file.id))).status).toBe(404);
      expect((await other.files.list()).data).toEqual([]);
    });
  });
}

suite('files on the local blob directory', async () => {
  const gateway = await startGateway();
  return { gateway, close: () => gateway.close() };
});

let s3: TestS3 | undefined;
suite('files on S3-compatible storage', async () => {
  s3 = await startS3();
  const gateway = await startGateway({ env: s3.env });
  return {
    gateway,
    close: async () => {
      await gateway.close();
      await s3?.close();
    },
  };
});

describe('upload limits', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startGateway({
      env: {
        GATEWAY_FILE_MAX_BYTES: '4096',
        GATEWAY_BATCH_FILE_MAX_BYTES: '2048',
        GATEWAY_BATCH_MAX_LINES: '3',
        GATEWAY_BODY_LIMIT_BYTES: '1024',
      },
    });
  });
  afterAll(async () => gateway?.close());

  it('refuses a batch file with a line longer than a request body may be, naming the line', async () => {
    const client = sdk(gateway);
    const line = (bytes: number) => `{"a":"${'x'.repeat(bytes - 8)}"}`;
    expect(Buffer.byteLength(line(1024))).toBe(1024);
    // As long as a request body may be, with \r\n and a byte order mark: taken.
    const ok = await client.files.create({
      file: await toFile(Buffer.from(`\uFEFF${line(1024)}\r\n{}\n`), 'ok.jsonl'),
      purpose: 'batch',
    });
    expect(ok.bytes).toBe(1032);
    // One byte longer, the last line or one in the middle: a direct call with it as its body gets 413.
    for (const text of [`{}\n${line(1025)}\n`, `{}\n{}\n${line(1025)}`]) {
      const refused = (await client.files
        .create({ file: await toFile(Buffer.from(text), 'long.jsonl'), purpose: 'batch' })
        .catch((err: unknown) => err)) as { status: number; error: { param: string; message: string } };
      expect(refused.status).toBe(400);
      expect(refused.error.param).toBe('file');
      expect(refused.error.message).toMatch(/^Line [23] of the batch file is longer than 1024 bytes/);
    }
    expect((await client.files.list()).data.map((f) => f.id)).toEqual([ok.id]);
    await client.files.delete(ok.id);
  });

  it('fails a batch whose stored file has a line past the bound (a file kept from a larger one)', async () => {
    const client = batchClient(gateway.url, gateway.adminKey, {
      provider: 'openai',
      api_key: 'sk-unused',
      custom_host: 'http://127.0.0.1:9/v1',
    });
    const file = await client.files.create({
      file: await toFile(Buffer.from(jsonl([chatLine('short')])), 'kept.jsonl'),
      purpose: 'batch',
    });
    // Its contents as a gateway with a larger GATEWAY_BODY_LIMIT_BYTES took them.
    const long = chatLine('long', 'gpt-4o-mini', 'x'.repeat(2000));
    await gateway.server.deps.blobs.put(fileKey(file.id), Buffer.from(jsonl([chatLine('short'), long])));
    const batch = await waitFor(client, (await createBatch(client, file.id)).id, finished);
    expect(batch.status).toBe('failed');
    expect(batch.errors?.data).toEqual([
      {
        code: 'line_too_long',
        message: expect.stringContaining('longer than 1024 bytes'),
        param: null,
        line: 2,
      },
    ]);
    await client.files.delete(file.id);
  });

  it('refuses a file over the limit with 413 and keeps nothing of it', async () => {
    const client = sdk(gateway);
    const big = await status(
      client.files.create({ file: await toFile(Buffer.alloc(10_000, 1), 'big.bin'), purpose: 'vision' }),
    );
    expect(big).toEqual({ status: 413, param: 'file' });
    const bigBatch = await status(
      client.files.create({
        file: await toFile(Buffer.from(`${'{"a":"' + 'x'.repeat(3000) + '"}'}\n`), 'b.jsonl'),
        purpose: 'batch',
      }),
    );
    expect(bigBatch).toEqual({ status: 413, param: 'file' });
    expect((await client.files.list()).data).toEqual([]);
  });

  it('refuses a batch file with more lines than allowed', async () => {
    const client = sdk(gateway);
    const lines = await status(
      client.files.create({
        file: await toFile(Buffer.from('{}\n{}\n{}\n{}\n'), 'lines.jsonl'),
        purpose: 'batch',
      }),
    );
    expect(lines).toEqual({ status: 400, param: 'file' });
    const ok = await client.files.create({
      file: await toFile(Buffer.from('{}\n{}\n{}'), 'ok.jsonl'),
      purpose: 'batch',
    });
    expect(ok.bytes).toBe(8);
  });

  it('counts the requests of a batch file against the limit, not its blank lines', async () => {
    const client = sdk(gateway);
    // Three requests (the limit), with blank lines between and after them, as the batch reader skips.
    const text = '{}\n\n{}\r\n  \n{}\n\n';
    const ok = await client.files.create({
      file: await toFile(Buffer.from(text), 'spaced.jsonl'),
      purpose: 'batch',
    });
    expect(ok.bytes).toBe(Buffer.byteLength(text));
    expect(
      await status(
        client.files.create({
          file: await toFile(Buffer.from('\n{}\n{}\n \n{}\n{}'), 'four.jsonl'),
          purpose: 'batch',
        }),
      ),
    ).toEqual({ status: 400, param: 'file' });
  });

  it('takes for blank only a line of JSON whitespace (spaces, tabs, \\r), as the batch reader does', async () => {
    const client = sdk(gateway);
    const refusal = async (text: string) => {
      const err = (await client.files
        .create({ file: await toFile(Buffer.from(text), 'blanks.jsonl'), purpose: 'batch' })
        .then(
          () => undefined,
          (error: unknown) => error,
        )) as { status: number; error: { message: string; param: string } } | undefined;
      return err && { status: err.status, message: err.error.message, param: err.error.param };
    };
    expect(await refusal('{}\n \t\r \r\n{}\n{}\n')).toBeUndefined();
    // Other white space is not JSON's: a line of it is no blank line, and not JSON either. The check
    // counted such a line as a request and the reader skipped it as blank.
    for (const space of ['\u00a0', '\f', '\v', '\u2028', '\u3000', '\uFEFF', ' \u00a0 ']) {
      for (const text of [`{}\n${space}\n{}\n`, `{}\n${space}\n{}\n{}\n`]) {
        expect(await refusal(text), JSON.stringify(text)).toEqual({
          status: 400,
          message: 'Line 2 of the batch file is not valid JSON',
          param: 'file',
        });
      }
    }
  });
});

describe('malformed uploads', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startGateway();
  });
  afterAll(async () => gateway?.close());

  const part = (name: string, value: string, filename?: string) =>
    `--xx\r\nContent-Disposition: form-data; name="${name}"` +
    (filename ? `; filename="${filename}"\r\nContent-Type: application/octet-stream` : '') +
    `\r\n\r\n${value}\r\n`;

  /** A raw request: status and body, or `undefined` when no answer came within `ms`. */
  function post(body: string | Buffer, contentType: string, ms = 10_000) {
    return new Promise<{ status: number; body: unknown } | undefined>((resolve, reject) => {
      const url = new URL(`${gateway.url}/files`);
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: {
            'x-gateway-api-key': gateway.adminKey,
            'content-type': contentType,
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.setTimeout(ms, () => {
        req.destroy();
        resolve(undefined);
      });
      req.end(body);
    });
  }

  const leftovers = () => {
    const temp = join(gateway.dataDir, 'blobs', '.tmp');
    return existsSync(temp) ? readdirSync(temp) : [];
  };

  it('takes a file part sent without a file name (RFC 7578 makes it optional), named file', async () => {
    const body =
      part('purpose', 'vision') +
      '--xx\r\nContent-Disposition: form-data; name="file"\r\nContent-Type: application/octet-stream\r\n\r\nhello\r\n--xx--\r\n';
    const answer = await post(body, 'multipart/form-data; boundary=xx');
    expect(answer?.status).toBe(200);
    expect(answer?.body).toMatchObject({ object: 'file', filename: 'file', bytes: 5, purpose: 'vision' });
    await sdk(gateway).files.delete((answer?.body as { id: string }).id);
  });

  it('answers a body without a boundary with a 400 naming the file', async () => {
    const answer = await post('garbage', 'multipart/form-data');
    expect(answer).toMatchObject({ status: 400, body: { error: { param: 'file', code: 'invalid_body' } } });
  });

  it('answers a body that ends before its closing boundary, and keeps nothing of it', async () => {
    const body = part('purpose', 'batch') + part('file', '{"a":1}\n'.repeat(1000), 'a.jsonl').slice(0, -50);
    const answer = await post(body, 'multipart/form-data; boundary=xx');
    expect(answer).toMatchObject({ status: 400, body: { error: { param: 'file', code: 'invalid_body' } } });
    expect(leftovers()).toEqual([]);
  });

  it('refuses a second file naming the field', async () => {
    const body =
      part('purpose', 'batch') + part('file', '{}', 'a.jsonl') + part('file', '{}', 'b.jsonl') + '--xx--\r\n';
    const answer = await post(body, 'multipart/form-data; boundary=xx');
    expect(answer).toMatchObject({
      status: 400,
      body: { error: { param: 'file', message: 'Send one file, in the field "file"' } },
    });
    expect(leftovers()).toEqual([]);
  });

  it("answers the gateway's own failure while storing an upload with a 500, not the client's 400", async () => {
    const { blobs } = gateway.server.deps;
    const put = blobs.put.bind(blobs);
    blobs.put = () => {
      throw new TypeError("Cannot read properties of undefined (reading 'bytes')");
    };
    try {
      const body = part('purpose', 'vision') + part('file', 'hello', 'a.txt') + '--xx--\r\n';
      const answer = await post(body, 'multipart/form-data; boundary=xx');
      expect(answer).toMatchObject({
        status: 500,
        body: { error: { code: 'internal_error', type: 'api_error', param: null } },
      });
    } finally {
      blobs.put = put;
    }
  });

  it('keeps nothing of an upload whose client went away in the middle', async () => {
    const url = new URL(`${gateway.url}/files`);
    const head =
      part('purpose', 'batch') +
      `--xx\r\nContent-Disposition: form-data; name="file"; filename="a.jsonl"\r\n\r\n`;
    const socket = net.connect(Number(url.port), url.hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nx-gateway-api-key: ${gateway.adminKey}\r\n` +
        `content-type: multipart/form-data; boundary=xx\r\ncontent-length: 1000000\r\n\r\n` +
        head +
        '{"a":1}\n'.repeat(2000),
    );
    // The upload has begun: its temporary file exists.
    await vi.waitFor(() => expect(leftovers()).toHaveLength(1), { timeout: 5_000 });
    socket.destroy();
    await vi.waitFor(() => expect(leftovers()).toEqual([]), { timeout: 5_000 });
    expect((await sdk(gateway).files.list()).data).toEqual([]);
  });
});
