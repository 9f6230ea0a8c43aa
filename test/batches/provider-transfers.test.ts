/**
 * A provider batch whose file transfers stall: the provider takes the input file's upload and never
 * answers, then sends half of the output file's contents and goes silent. Each transfer fails on the
 * transfer idle timeout, well before the request timeout, and its job tries again; the batch completes.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatLine, contentLines, finished, jsonl, sdk, SLOW_TEST_MS, upload, waitFor } from './support.js';

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Relays to the fake provider, but for the first upload and the first file download, which stall. */
function stallingProxy(fake: FakeUpstream): Server & { uploads: number; downloads: number } {
  const proxy = Object.assign(
    createServer((request, response) => {
      void (async () => {
        const body = await bodyOf(request);
        const path = request.url ?? '/';
        const isUpload = request.method === 'POST' && path === '/v1/files';
        const isDownload = request.method === 'GET' && /^\/v1\/files\/[^/]+\/content$/.test(path);
        if (isUpload && ++proxy.uploads === 1) return; // the whole file taken, no answer ever
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(request.headers)) {
          if (typeof value === 'string' && name !== 'host' && name !== 'content-length')
            headers[name] = value;
        }
        const answer = await fetch(`${fake.url.replace(/\/v1$/, '')}${path}`, {
          method: request.method,
          headers,
          ...(body.length > 0 && { body }),
        });
        const bytes = Buffer.from(await answer.arrayBuffer());
        response.writeHead(answer.status, {
          'content-type': answer.headers.get('content-type') ?? 'application/json',
          'content-length': String(bytes.length),
        });
        if (isDownload && ++proxy.downloads === 1) {
          response.write(bytes.subarray(0, Math.floor(bytes.length / 2))); // half, then silence
          return;
        }
        response.end(bytes);
      })();
    }),
    { uploads: 0, downloads: 0 },
  );
  return proxy;
}

describe('a provider batch whose file transfers stall', () => {
  let fake: FakeUpstream;
  let proxy: ReturnType<typeof stallingProxy>;
  let gateway: TestGateway;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'stalling' });
    proxy = stallingProxy(fake);
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    gateway = await startGateway({
      env: {
        GATEWAY_BATCH_POLL_MS: '20',
        GATEWAY_REQUEST_TIMEOUT_MS: '120000',
        GATEWAY_FILE_TRANSFER_IDLE_TIMEOUT_MS: '500',
      },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    proxy?.closeAllConnections();
    await new Promise((resolve) => proxy?.close(resolve));
    await fake?.close();
  });

  it(
    'fails each stalled transfer on its idle timeout and completes the batch when its job tries again',
    async () => {
      const customHost = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`;
      const client = sdk(gateway.url, gateway.adminKey, {
        provider: 'openai',
        api_key: 'sk-stalling',
        custom_host: customHost,
      });
      const input = await upload(client, jsonl([chatLine('s-1'), chatLine('s-2')]));
      const started = Date.now();
      const created = await client.batches.create({
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      const batch = await waitFor(client, created.id, finished, 30_000);
      expect(batch.status).toBe('completed');
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(proxy.uploads).toBe(2);
      expect(proxy.downloads).toBeGreaterThanOrEqual(2);
      const output = await contentLines(client, batch.output_file_id);
      expect(output.map((line) => line.custom_id)).toEqual(['s-1', 's-2']);
    },
    SLOW_TEST_MS,
  );
});
