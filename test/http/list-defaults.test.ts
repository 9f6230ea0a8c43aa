/**
 * The paging and filter parameters of the list operations: GET /v1/openapi.json states the default each
 * takes when it is left out — the interface's (batches and input items 20, fine-tuning jobs and events 20,
 * checkpoints 10, policies `active`) and the gateway's own (files, policy pages) — and the routes apply
 * those same defaults, so a client generated from the document pages as the gateway does.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

interface Parameter {
  name: string;
  in: string;
  schema: { default?: unknown };
}
type Document = { paths: Record<string, Record<string, { parameters?: Parameter[] }>> };

const DEFAULTS: Array<[method: string, path: string, parameter: string, value: unknown]> = [
  ['get', '/v1/batches', 'limit', 20],
  ['get', '/v1/responses/{response_id}/input_items', 'limit', 20],
  ['get', '/v1/responses/{response_id}/input_items', 'order', 'asc'],
  ['get', '/v1/fine_tuning/jobs', 'limit', 20],
  ['get', '/v1/fine_tuning/jobs/{fine_tuning_job_id}/events', 'limit', 20],
  ['get', '/v1/fine_tuning/jobs/{fine_tuning_job_id}/checkpoints', 'limit', 10],
  ['get', '/v1/files', 'limit', 10_000],
  ['get', '/v1/files', 'order', 'desc'],
  ['get', '/v1/policies/rate-limits', 'status', 'active'],
  ['get', '/v1/policies/rate-limits', 'page_size', 100],
  ['get', '/v1/policies/rate-limits', 'current_page', 0],
];

describe('list defaults', () => {
  let fake: FakeUpstream;
  let gateway: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'list-defaults' });
    gateway = await startGateway();
    client = gatewayOpenAI(gateway, { provider: 'openai', api_key: 'sk-test', custom_host: fake.url });
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  it('are stated in the OpenAPI document', async () => {
    const document = (await (await fetch(`${gateway.url}/openapi.json`)).json()) as Document;
    for (const [method, path, name, value] of DEFAULTS) {
      const parameter = document.paths[path]?.[method]?.parameters?.find(
        (p) => p.in === 'query' && p.name === name,
      );
      expect(parameter?.schema.default, `${method} ${path} ${name}`).toEqual(value);
    }
  });

  it('are what the batch list applies: 20 batches a page', async () => {
    const line = {
      custom_id: 'a',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    };
    const input = await client.files.create({
      file: await toFile(Buffer.from(JSON.stringify(line) + '\n'), 'input.jsonl'),
      purpose: 'batch',
    });
    const created: string[] = [];
    for (let i = 0; i < 21; i++) {
      const batch = await client.batches.create({
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: 'immediate' as '24h',
      });
      created.push(batch.id);
    }
    const page = await client.batches.list();
    expect(page.data.map((b) => b.id)).toEqual(created.slice(1).reverse());
    expect(page.has_more).toBe(true);
  });

  it("are what a response's input item list applies: 20 items a page, oldest first", async () => {
    const input = Array.from({ length: 21 }, (_, i) => ({ role: 'user' as const, content: `turn ${i}` }));
    const response = await client.responses.create({ model: 'gpt-4o-mini', input });
    const page = await client.responses.inputItems.list(response.id);
    const texts = page.data.map((item) => {
      const content = (item as { content: Array<{ text: string }> }).content;
      return content[0]?.text;
    });
    expect(texts).toEqual(input.slice(0, 20).map((message) => message.content));
    expect(page.has_more).toBe(true);
  });

  it('are what the fine-tuning job list applies: 20 jobs a page', async () => {
    const training = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ];
    const file = await client.files.create({
      file: await toFile(Buffer.from(JSON.stringify({ messages: training }) + '\n'), 'train.jsonl'),
      purpose: 'fine-tune',
    });
    const created: string[] = [];
    for (let i = 0; i < 21; i++) {
      const job = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: file.id });
      created.push(job.id);
    }
    const page = await client.fineTuning.jobs.list();
    expect(page.data.map((job) => job.id)).toEqual(created.slice(1).reverse());
    expect(page.has_more).toBe(true);
  });
});
