/**
 * `/v1/files` answered by the provider's own Files API when the client sends `x-gateway-files: provider`,
 * with the official `openai` SDK against the fake OpenAI: upload streamed through, list, get, content,
 * delete; without the header the gateway's own store answers.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

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
