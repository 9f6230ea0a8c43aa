/** The console's files as the gateway serves them: headers, the app's fallback, and a rebuild while running. */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { registerConsoleRoutes } from '../../src/server/routes/console.js';

const PACKED = 'compressed();'.repeat(100);

let dir: string;
let app: FastifyInstance;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'console-files-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<script src="/console/assets/index-old.js"></script>');
  writeFileSync(join(dir, 'assets', 'index-old.js'), 'old();');
  writeFileSync(join(dir, 'assets', 'index-start.js'), PACKED);
  writeFileSync(join(dir, 'assets', 'index-start.js.br'), brotliCompressSync(PACKED));
  writeFileSync(join(dir, 'assets', 'index-start.js.gz'), gzipSync(PACKED));
  app = Fastify();
  await registerConsoleRoutes(app, dir);
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('serves hashed assets for good and the app, revalidated, on any other path', async () => {
  const asset = await app.inject('/console/assets/index-old.js');
  expect(asset.statusCode).toBe(200);
  expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  const page = await app.inject('/console/logs/abc');
  expect(page.statusCode).toBe(200);
  expect(page.headers['cache-control']).toBe('no-cache');
  expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(page.body).toContain('index-old.js');
});

it('serves the bundle of a rebuild made while running, named by the new index.html', async () => {
  writeFileSync(join(dir, 'assets', 'index-new.js'), 'fresh();');
  writeFileSync(join(dir, 'index.html'), '<script src="/console/assets/index-new.js"></script>');
  expect((await app.inject('/console/')).body).toContain('index-new.js');
  const asset = await app.inject('/console/assets/index-new.js?v=1');
  expect(asset.statusCode).toBe(200);
  expect(asset.body).toBe('fresh();');
  expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  expect(asset.headers['x-content-type-options']).toBe('nosniff');
});

it('answers a missing or outside asset with a 404 in the error shape, never the app', async () => {
  for (const path of [
    '/console/assets/gone.js',
    '/console/assets/..%2F..%2Findex.html',
    '/console/assets/..%2F..%2F..%2Fpackage.json',
  ]) {
    const res = await app.inject(path);
    expect(res.statusCode, path).toBe(404);
    expect(res.json(), path).toMatchObject({ error: { code: 'not_found' } });
  }
});

it('serves the precompressed copy a client accepts, brotli first, and the file as it is to others', async () => {
  // One there at the start (a route of its own), one built after it (the assets' fallback).
  writeFileSync(join(dir, 'assets', 'index-packed.js'), PACKED);
  writeFileSync(join(dir, 'assets', 'index-packed.js.br'), brotliCompressSync(PACKED));
  writeFileSync(join(dir, 'assets', 'index-packed.js.gz'), gzipSync(PACKED));
  for (const name of ['index-start.js', 'index-packed.js']) {
    const url = `/console/assets/${name}`;
    const both = await app.inject({ url, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(both.statusCode, name).toBe(200);
    expect(both.headers['content-encoding'], name).toBe('br');
    expect(both.headers['content-type'], name).toMatch(/javascript/);
    expect(both.headers['cache-control'], name).toBe('public, max-age=31536000, immutable');
    expect(both.headers.vary, name).toMatch(/accept-encoding/i);
    expect(brotliDecompressSync(both.rawPayload).toString(), name).toBe(PACKED);
    const gzipOnly = await app.inject({ url, headers: { 'accept-encoding': 'gzip' } });
    expect(gzipOnly.headers['content-encoding'], name).toBe('gzip');
    expect(gunzipSync(gzipOnly.rawPayload).toString(), name).toBe(PACKED);
    const plain = await app.inject({ url, headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers['content-encoding'], name).toBeUndefined();
    expect(plain.body, name).toBe(PACKED);
  }
});

it('revalidates the page when the console is installed under a directory named assets', async () => {
  // Only the path under the console's own root tells a hashed asset: an install path such as
  // /srv/assets/gateway/dist/console holds `/assets/` too.
  const installed = join(dir, 'srv', 'assets', 'gateway', 'console');
  mkdirSync(join(installed, 'assets'), { recursive: true });
  writeFileSync(join(installed, 'index.html'), '<script src="/console/assets/index-here.js"></script>');
  writeFileSync(join(installed, 'assets', 'index-here.js'), 'here();');
  const other = Fastify();
  try {
    await registerConsoleRoutes(other, installed);
    await other.ready();
    for (const path of ['/console/', '/console/index.html', '/console/logs/abc']) {
      const page = await other.inject(path);
      expect(page.statusCode, path).toBe(200);
      expect(page.body, path).toContain('index-here.js');
      expect(page.headers['cache-control'], path).toBe('no-cache');
    }
    const asset = await other.inject('/console/assets/index-here.js');
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  } finally {
    await other.close();
  }
});
