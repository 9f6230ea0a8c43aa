/**
 * `/v1/files` answered by the provider's own Files API when the client sends `x-gateway-files: provider`,
 * with the official `openai` SDK against the fake OpenAI (and the fake Azure for HEAD of contents): upload
 * streamed through, list, get, content and its HEAD, delete; without the header the gateway's own store
 * answers.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAzure, type FakeAzure } from '../fakes/azure/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayHeaders, gatewayOpenAI } from '../helpers/openai-client.js';

/**
 * A HEAD of a provider file's contents beside its GET: the same content-type, the file's length, and the
 * provider asked for the file object alone (`sent` gives what it was sent meanwhile); a file it does not
 * have is 404, as the GET.
 */
async function expectHeadOfContent(
  gateway: TestGateway,
  config: Record<string, unknown>,
  fileId: string,
  sent: () => string[],
): Promise<string[]> {
  const headers = gatewayHeaders(gateway, config, { 'x-gateway-files': 'provider' });
  const get = await fetch(`${gateway.url}/files/${fileId}/content`, { headers });
  expect(get.status).toBe(200);
  const bytes = Buffer.from(await get.arrayBuffer()).length;
  const before = sent().length;
  const head = await fetch(`${gateway.url}/files/${fileId}/content`, { method: 'HEAD', headers });
  expect(head.status).toBe(200);
  expect(head.headers.get('content-length')).toBe(String(bytes));
  expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
  const asked = sent().slice(before);
  const missing = await fetch(`${gateway.url}/files/file-missing/content`, { method: 'HEAD', headers });
  expect(missing.status).toBe(404);
  return asked;
}

describe('files at the provider (x-gateway-files: provider)', () => {
  let fake: FakeUpstream;
  let gateway: TestGateway;
  const config = () =>
    JSON.stringify({ provider: 'openai', api_key: 'sk-files-0123456789', custom_host: fake.url });
  const sdk = (headers: Record<string, string>) =>
    new OpenAI({
      baseURL: gateway.url,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': config(), ...headers },
    });

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'files' });
    gateway = await startGateway();
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  it('uploads, lists, reads and deletes at the provider', async () => {
    const client = sdk({ 'x-gateway-files': 'provider' });
    const text = '{"messages":[{"role":"user","content":"hi"}]}\n';
    const file = await client.files.create({
      file: await toFile(Buffer.from(text), 'train.jsonl'),
      purpose: 'fine-tune',
    });
    expect(file).toMatchObject({
      object: 'file',
      purpose: 'fine-tune',
      filename: 'train.jsonl',
      bytes: text.length,
    });
    expect(file.id).toMatch(/^file-/);
    expect(fake.resources.files.get(file.id)?.content.toString()).toBe(text);
    const upload = fake.requests.find((r) => r.method === 'POST' && r.path === '/v1/files');
    expect(upload?.headers.authorization).toBe('Bearer sk-files-0123456789');

    expect((await client.files.list()).data.map((f) => f.id)).toContain(file.id);
    expect(await client.files.retrieve(file.id)).toMatchObject({ id: file.id, bytes: text.length });
    expect(await (await client.files.content(file.id)).text()).toBe(text);
    expect(await client.files.delete(file.id)).toEqual({ id: file.id, object: 'file', deleted: true });
    expect(fake.resources.files.has(file.id)).toBe(false);
    const gone = (await client.files.retrieve(file.id).catch((err: unknown) => err)) as { status: number };
    expect(gone.status).toBe(404);

    // Without the header, the gateway's own store: the provider sees nothing.
    const before = fake.requests.length;
    const own = await sdk({}).files.create({
      file: await toFile(Buffer.from(text), 'own.jsonl'),
      purpose: 'fine-tune',
    });
    expect(own.id).toMatch(/^file_/);
    expect(fake.requests.length).toBe(before);
  });

  it("refuses a file id of '.' or '..' (or any not an id) with 400 invalid_path, sending nothing", async () => {
    const headers = {
      'x-gateway-api-key': gateway.adminKey,
      'x-gateway-files': 'provider',
      'x-gateway-config': config(),
    };
    const before = fake.requests.length;
    for (const [method, path, id] of [
      ['DELETE', '/files/%2E%2E', '..'],
      ['GET', '/files/%2E%2E/content', '..'],
      ['HEAD', '/files/%2e/content', '.'],
      ['GET', '/files/%2e', '.'],
      ['GET', '/files/file%3Fx%3D1', 'file?x=1'],
    ] as const) {
      // Sent as written: fetch would resolve the dot segments before the gateway saw them.
      const { status, body } = await rawRequest(method, `${new URL(gateway.url).pathname}${path}`);
      expect(status, `${method} ${path}`).toBe(400);
      if (method === 'HEAD') continue;
      const { error } = JSON.parse(body) as { error: { code: string; param: string; message: string } };
      expect(error.code).toBe('invalid_path');
      expect(error.param).toBe('file_id');
      expect(error.message).toContain(JSON.stringify(id));
    }
    expect(fake.requests.length).toBe(before);

    function rawRequest(method: string, path: string): Promise<{ status: number; body: string }> {
      return new Promise((resolve, reject) => {
        const sent = request(gateway.url, { method, path, headers }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
          );
        });
        sent.on('error', reject);
        sent.end();
      });
    }
  });

  it("answers HEAD of a file's contents from the provider's file object, reading no contents", async () => {
    const client = sdk({ 'x-gateway-files': 'provider' });
    const text = '{"messages":[{"role":"user","content":"héllo"}]}\n'.repeat(50);
    const file = await client.files.create({
      file: await toFile(Buffer.from(text), 'head.jsonl'),
      purpose: 'fine-tune',
    });
    const asked = await expectHeadOfContent(
      gateway,
      JSON.parse(config()) as Record<string, unknown>,
      file.id,
      () => fake.requests.map((r) => `${r.method} ${r.path}`),
    );
    expect(asked).toEqual([`GET /v1/files/${file.id}`]);

    // A file object that gives no length is the provider's answer gone wrong, not a file of no bytes.
    fake.enqueue({ status: 200, body: { id: file.id, object: 'file' } });
    const unsized = await fetch(`${gateway.url}/files/${file.id}/content`, {
      method: 'HEAD',
      headers: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': config(),
        'x-gateway-files': 'provider',
      },
    });
    expect(unsized.status).toBe(502);
  });

  it('refuses an upload that is not multipart with 415 naming the file, sending nothing', async () => {
    const before = fake.requests.length;
    const answer = await fetch(`${gateway.url}/files`, {
      method: 'POST',
      headers: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': config(),
        'x-gateway-files': 'provider',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ purpose: 'batch', file: 'a.jsonl' }),
    });
    expect(answer.status).toBe(415);
    expect(((await answer.json()) as { error: { param: string } }).error.param).toBe('file');
    expect(fake.requests.length).toBe(before);
  });

  it('refuses a provider without a Files API, naming it', async () => {
    const client = new OpenAI({
      baseURL: gateway.url,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-provider': 'anthropic',
        authorization: 'Bearer sk-ant-x',
        'x-gateway-files': 'provider',
      },
    });
    const error = (await client.files.list().catch((err: unknown) => err)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(error.status).toBe(400);
    expect(error.message).toContain('"anthropic"');
  });
});

describe('files at Azure OpenAI (x-gateway-files: provider)', () => {
  let azure: FakeAzure;
  let gateway: TestGateway;
  let config: Record<string, unknown>;

  beforeAll(async () => {
    azure = await startFakeAzure();
    gateway = await startGateway();
    config = {
      provider: 'azure-openai',
      api_key: azure.apiKey,
      custom_host: azure.url,
      api_version: '2024-10-21',
    };
  });
  afterAll(async () => {
    await gateway?.close();
    await azure?.close();
  });

  it("answers HEAD of a file's contents from Azure's file object, reading no contents", async () => {
    const client = gatewayOpenAI(gateway, config, { 'x-gateway-files': 'provider' });
    const text = '{"messages":[{"role":"user","content":"hi"}]}\n'.repeat(20);
    const file = await client.files.create({
      file: await toFile(Buffer.from(text), 'head.jsonl'),
      purpose: 'fine-tune',
    });
    const asked = await expectHeadOfContent(gateway, config, file.id, () =>
      azure.requests.map((r) => `${r.method} ${r.path}`),
    );
    expect(asked).toEqual([`GET /openai/files/${file.id}`]);
  });
});

describe("a provider file's contents read through the gateway", () => {
  const CHUNKS = 12;
  const CHUNK_EVERY_MS = 150;
  // The provider sends the file slowly but steadily: longer in all than the request timeout.
  const provider = createServer((request, response) => {
    request.resume();
    if (!/^\/v1\/files\/[^/]+\/content$/.test(request.url ?? '')) {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'no such file', type: 'invalid_request_error' } }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/octet-stream' });
    let sent = 0;
    const timer = setInterval(() => {
      response.write(`{"line":${sent}}\n`);
      if (++sent === CHUNKS) {
        clearInterval(timer);
        response.end();
      }
    }, CHUNK_EVERY_MS);
  });
  let gateway: TestGateway;

  beforeAll(async () => {
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    gateway = await startGateway({
      env: { GATEWAY_REQUEST_TIMEOUT_MS: '1000', GATEWAY_FILE_TRANSFER_IDLE_TIMEOUT_MS: '1000' },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    provider.closeAllConnections();
    await new Promise((resolve) => provider.close(resolve));
  });

  it('comes whole when it keeps moving, however long it takes in all', async () => {
    const customHost = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`;
    const client = gatewayOpenAI(
      gateway,
      {
        provider: 'openai',
        api_key: 'sk-slow',
        custom_host: customHost,
      },
      { 'x-gateway-files': 'provider' },
    );
    const started = Date.now();
    const text = await (await client.files.content('file-slow')).text();
    expect(Date.now() - started).toBeGreaterThan(1000);
    expect(text.split('\n').filter(Boolean)).toHaveLength(CHUNKS);
  });
});
