/**
 * The upstream client reads answers through undici's dispatch handler API (gateway/upstream-response.ts)
 * instead of undici's Readable body: whole bodies, chunk-by-chunk reading with the reader's pace holding
 * the upstream back, early stops and aborts must behave as a stream would.
 */
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallAbort } from '../../src/core/abort.js';
import { UpstreamTooLarge } from '../../src/core/upstream-limits.js';
import { createUpstreamClient, type UpstreamClient } from '../../src/gateway/upstream.js';
import { freePort } from '../helpers/free-port.js';

let server: Server;
let origin: string;
let client: UpstreamClient;
const TRICKLE_CHUNKS = 60;
const trickled = Array.from({ length: TRICKLE_CHUNKS }, (_, i) => `${String(i).padStart(7, '0')},`).join('');
/** Responses the /hold route keeps open, to be written to by the test. */
const held: ServerResponse[] = [];
/** Bytes the /flood route managed to write before the socket pushed back. */
let floodWritten = 0;
let floodBlocked = false;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/json') {
      res.writeHead(200, { 'content-type': 'application/json', 'x-Mixed-Case': 'yes' });
      res.write('{"a":');
      setTimeout(() => res.end('"é"}'), 5);
    } else if (req.url === '/hold') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      held.push(res);
    } else if (req.url === '/flood') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 120);
      const pump = () => {
        while (floodWritten < 64 * 1024 * 1024) {
          floodWritten += chunk.length;
          if (!res.write(chunk)) {
            floodBlocked = true;
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    } else if (req.url === '/sized') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(1 << 30) });
      res.write('{');
      held.push(res);
    } else if (req.url?.startsWith('/bytes?')) {
      // `n` bytes in chunks of 1000, without a Content-Length; with `open`, the answer is then held open,
      // so that only a reader that closes the request ends it.
      const query = new URL(req.url, 'http://x').searchParams;
      const n = Number(query.get('n'));
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      for (let sent = 0; sent < n; sent += 1000) res.write(Buffer.alloc(Math.min(1000, n - sent), 120));
      if (query.has('open')) held.push(res);
      else res.end();
    } else if (req.url === '/trickle') {
      // Many small chunks, each its own read on the gateway's side: more than the reader's high-water mark.
      res.writeHead(200, { 'content-type': 'application/json' });
      let sent = 0;
      const next = () => {
        if (res.destroyed) return;
        if (sent === TRICKLE_CHUNKS) return void res.end();
        res.write(`${String(sent++).padStart(7, '0')},`);
        setTimeout(next, 1);
      };
      next();
    } else {
      res.writeHead(404).end('nope');
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = createUpstreamClient('private');
});

afterAll(async () => {
  for (const res of held) res.destroy();
  await client?.close();
  server?.close();
});

const get = (path: string, signal = new CallAbort()) =>
  client.send({ method: 'GET', url: `${origin}${path}`, headers: {} }, signal);

describe('upstream answers through the dispatch handler', () => {
  it('gives the status, lower-cased headers and the whole body as text across chunks', async () => {
    const response = await get('/json');
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-mixed-case']).toBe('yes');
    expect(await response.body.text(1024 * 1024)).toBe('{"a":"é"}');
  });

  it('reads the whole body when text() comes after the unread chunks reached the high-water mark', async () => {
    const response = await get('/trickle');
    // Unread, 16 chunks pause the upstream; text() resumes it and must take every chunk that follows.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const text = response.body.text(1024 * 1024);
    const timeout = new Promise((resolve) => setTimeout(resolve, 3000, 'still waiting'));
    expect(await Promise.race([text, timeout])).toBe(trickled);
  });

  it('refuses a body past the bound text() is given, and closes the request', async () => {
    floodWritten = 0;
    const response = await get('/flood');
    await expect(response.body.text(1024 * 1024)).rejects.toThrow(UpstreamTooLarge);
    // The upstream was not read on: it stopped far short of its 64 MB.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(floodWritten).toBeLessThan(16 * 1024 * 1024);
  });

  it('refuses a body whose Content-Length is past the bound before reading it', async () => {
    const response = await get('/json');
    // 10 bytes: é is two.
    expect(await response.body.text(10)).toBe('{"a":"é"}');
    const sized = await get('/sized');
    await expect(sized.body.text(1024)).rejects.toThrow(/larger than 1024 bytes/);
  });

  it('reads a body of exactly the bound whole (text or bytes), read as it comes or queued before', async () => {
    expect(await (await get('/bytes?n=5000')).body.text(5000)).toBe('x'.repeat(5000));
    const queued = await get('/bytes?n=5000');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await queued.body.text(5000)).toBe('x'.repeat(5000));
    expect(await (await get('/bytes?n=5000')).body.bytes(5000)).toEqual(Buffer.alloc(5000, 'x'));
  });

  it('refuses a body one byte past the bound and closes the request, read as it comes or queued before', async () => {
    const coming = await get('/bytes?n=5001&open');
    await expect(coming.body.text(5000)).rejects.toThrow(/larger than 5000 bytes/);
    await once(held.at(-1)!, 'close');
    const queued = await get('/bytes?n=5001&open');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await expect(queued.body.text(5000)).rejects.toThrow(UpstreamTooLarge);
    await once(held.at(-1)!, 'close');
    const asBytes = await get('/bytes?n=5001&open');
    await expect(asBytes.body.bytes(5000)).rejects.toThrow(UpstreamTooLarge);
    await once(held.at(-1)!, 'close');
  });

  it('reads an error answer whole', async () => {
    const response = await get('/missing');
    expect(response.statusCode).toBe(404);
    expect(await response.body.text(1024 * 1024)).toBe('nope');
  });

  it('yields chunks as they arrive and ends when the answer ends', async () => {
    const response = await get('/hold');
    const reader = response.body[Symbol.asyncIterator]();
    const first = await reader.next();
    expect(Buffer.from(first.value as Uint8Array).toString()).toBe('data: first\n\n');
    const pending = reader.next();
    held.at(-1)!.write('data: second\n\n');
    expect(Buffer.from((await pending).value as Uint8Array).toString()).toBe('data: second\n\n');
    held.at(-1)!.end();
    expect((await reader.next()).done).toBe(true);
  });

  it('holds the upstream back while the reader does not read', async () => {
    floodWritten = 0;
    floodBlocked = false;
    const response = await get('/flood');
    const reader = response.body[Symbol.asyncIterator]();
    let bytes = ((await reader.next()).value as Uint8Array).length;
    // Unread, the answer stops at the high-water mark plus what the sockets buffer, far below its 64 MB.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(floodBlocked).toBe(true);
    expect(floodWritten).toBeLessThan(16 * 1024 * 1024);
    // Read on, it all comes through.
    for (let next = await reader.next(); !next.done; next = await reader.next()) bytes += next.value.length;
    expect(bytes).toBe(64 * 1024 * 1024);
  });

  it('ends a waiting reader and closes the request when the body is destroyed', async () => {
    const response = await get('/hold');
    const res = held.at(-1)!;
    const reader = response.body[Symbol.asyncIterator]();
    await reader.next();
    const pending = reader.next();
    response.body.destroy();
    expect((await pending).done).toBe(true);
    await once(res, 'close');
  });

  it('closes the request when the reader stops early', async () => {
    const response = await get('/hold');
    const res = held.at(-1)!;
    for await (const chunk of response.body) {
      expect(chunk.length).toBeGreaterThan(0);
      break;
    }
    await once(res, 'close');
  });

  it('fails a waiting reader when the signal aborts mid-answer', async () => {
    const signal = new CallAbort();
    const response = await get('/hold', signal);
    const reader = response.body[Symbol.asyncIterator]();
    await reader.next();
    const pending = reader.next();
    signal.abort();
    await expect(pending).rejects.toThrow(/abort/i);
    await once(held.at(-1)!, 'close');
  });

  it('refuses at once with a signal aborted before the call', async () => {
    const signal = new CallAbort();
    signal.abort();
    await expect(get('/json', signal)).rejects.toThrow(/abort/i);
  });

  it('rejects the head when the upstream cannot be reached', async () => {
    const port = await freePort();
    await expect(
      client.send({ method: 'GET', url: `http://127.0.0.1:${port}/`, headers: {} }, new CallAbort()),
    ).rejects.toThrow();
  });
});
