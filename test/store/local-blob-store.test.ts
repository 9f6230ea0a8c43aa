/** Blobs in a local directory: streamed in and out, replaced atomically, kept inside their directory. */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import { createLocalBlobStore } from '../../src/store/index.js';

const parent = mkdtempSync(join(tmpdir(), 'gateway-blobs-'));
const directory = join(parent, 'blobs');
const blobs = createLocalBlobStore(directory);

afterAll(() => rmSync(parent, { recursive: true, force: true }));

async function readAll(stream: Readable | undefined): Promise<Buffer> {
  expect(stream).toBeInstanceOf(Readable);
  const chunks: Buffer[] = [];
  for await (const chunk of stream as Readable) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

/** An async source that stops after its first chunk until `release` is called. */
function pausedSource(first: Uint8Array, rest: Uint8Array, failInstead = false) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let sentFirst!: () => void;
  const firstSent = new Promise<void>((resolve) => (sentFirst = resolve));
  async function* source(): AsyncIterable<Uint8Array> {
    yield first;
    sentFirst();
    await released;
    if (failInstead) throw new Error('client went away');
    yield rest;
  }
  return { source: source(), release, firstSent };
}

describe('local blob store', () => {
  it('stores bytes, streams them back and reports size, hash and time', async () => {
    const data = randomBytes(1_000);
    expect(await blobs.put('files/file_1', data)).toEqual({ bytes: 1_000, sha256: sha256(data) });
    expect(await readAll(await blobs.get('files/file_1'))).toEqual(data);
    const info = await blobs.stat('files/file_1');
    expect(info?.bytes).toBe(1_000);
    expect(info?.modified_at_ms).toBeGreaterThan(Date.now() - 60_000);
  });

  it('takes async iterables and Readables, streaming large blobs in chunks', async () => {
    const chunk = randomBytes(64 * 1024);
    async function* many(): AsyncIterable<Uint8Array> {
      for (let i = 0; i < 80; i++) yield chunk;
    }
    const whole = Buffer.concat(Array.from({ length: 80 }, () => chunk));
    expect(await blobs.put('batches/b1/input.jsonl', many())).toEqual({
      bytes: whole.length,
      sha256: sha256(whole),
    });
    const stream = await blobs.get('batches/b1/input.jsonl');
    let largest = 0;
    const parts: Buffer[] = [];
    for await (const part of stream as Readable) {
      largest = Math.max(largest, (part as Buffer).length);
      parts.push(part as Buffer);
    }
    expect(largest).toBeLessThan(whole.length);
    // Buffer.equals: toEqual walks 5 MB element by element and takes tens of seconds on a busy machine.
    expect(Buffer.concat(parts).equals(whole)).toBe(true);

    const text = ['{"a":1}\n', '{"a":2}\n'];
    expect(await blobs.put('batches/b1/output.jsonl', Readable.from(text))).toMatchObject({ bytes: 16 });
    expect((await readAll(await blobs.get('batches/b1/output.jsonl'))).toString()).toBe(text.join(''));
  });

  it('answers undefined and false for missing blobs, and deletes', async () => {
    expect(await blobs.get('files/missing')).toBeUndefined();
    expect(await blobs.stat('files/missing')).toBeUndefined();
    expect(await blobs.delete('files/missing')).toBe(false);
    expect(await blobs.get('nowhere/at/all')).toBeUndefined();
    await blobs.put('files/doomed', Buffer.from('x'));
    expect(await blobs.delete('files/doomed')).toBe(true);
    expect(await blobs.delete('files/doomed')).toBe(false);
    expect(await blobs.get('files/doomed')).toBeUndefined();
    // A folder made by longer keys is not a blob.
    expect(await blobs.get('files')).toBeUndefined();
    expect(await blobs.stat('files')).toBeUndefined();
  });

  it('never shows a blob being written: readers see the old one until the new one is whole', async () => {
    await blobs.put('files/replaced', Buffer.from('old contents'));
    const { source, release, firstSent } = pausedSource(
      Buffer.from('new '),
      Buffer.from('contents, all of them'),
    );
    const putting = blobs.put('files/replaced', source);
    const fresh = pausedSource(Buffer.from('half'), Buffer.from(' and the rest'));
    const puttingFresh = blobs.put('files/fresh', fresh.source);
    await Promise.all([firstSent, fresh.firstSent]);

    const openedBefore = await blobs.get('files/replaced');
    expect(await blobs.stat('files/replaced')).toMatchObject({ bytes: 12 });
    expect(await blobs.get('files/fresh')).toBeUndefined();
    release();
    fresh.release();
    await Promise.all([putting, puttingFresh]);

    expect((await readAll(openedBefore)).toString()).toBe('old contents');
    expect((await readAll(await blobs.get('files/replaced'))).toString()).toBe('new contents, all of them');
    expect((await readAll(await blobs.get('files/fresh'))).toString()).toBe('half and the rest');
  });

  it('a failed put keeps the old blob and leaves no temporary file behind', async () => {
    await blobs.put('files/kept', Buffer.from('kept'));
    const { source, release, firstSent } = pausedSource(Buffer.from('partial'), Buffer.alloc(0), true);
    const putting = blobs.put('files/kept', source);
    await firstSent;
    release();
    await expect(putting).rejects.toThrow('client went away');
    expect((await readAll(await blobs.get('files/kept'))).toString()).toBe('kept');
    expect(readdirSync(join(directory, '.tmp'))).toEqual([]);
  });

  it.each([
    '',
    '../outside',
    'files/../../outside',
    '/etc/passwd',
    'files//double',
    'files/',
    './here',
    'files/./here',
    '.tmp/sneaky',
    '.hidden',
    'files\\windows',
    'C:\\outside',
    'files/na me',
    'x'.repeat(513),
  ])('refuses the key %j', async (key) => {
    for (const attempt of [
      () => blobs.put(key, Buffer.from('x')),
      () => blobs.get(key),
      () => blobs.delete(key),
      () => blobs.stat(key),
    ]) {
      const error = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).code).toBe('internal_error');
    }
    expect(readdirSync(parent)).toEqual(['blobs']);
  });
});
