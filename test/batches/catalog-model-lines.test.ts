/**
 * A managed batch created with the gateway key alone (no provider header, no config): each line's body
 * `model` written `@<provider_slug>/<model>` names its catalog provider, as a direct call's does. A line
 * whose model names none fails the validation; one naming a slug the workspace does not have is answered
 * with the direct call's 404. A batch created with a provider sends its lines' models as written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { addCatalogProvider, client } from '../management/http.js';
import {
  chatLine,
  contentLines,
  createBatch,
  finished,
  jsonl,
  sdk,
  target,
  upload,
  waitFor,
} from './support.js';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'batch-catalog' });
  gateway = await startGateway({ env: { GATEWAY_BATCH_POLL_MS: '20' } });
  await addCatalogProvider(client(gateway.url, gateway.adminKey), 'batch-cat', 'sk-batch-catalog', fake.url);
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

const sentModels = () =>
  fake.requests
    .filter((request) => request.path === '/v1/chat/completions')
    .map((request) => [(request.body as { model: string }).model, request.headers.authorization]);

describe('a managed batch whose lines name their catalog provider in the model', () => {
  it('sends each line to the catalog provider its model names, with the model after the slash', async () => {
    fake.reset();
    const keyOnly = sdk(gateway.url, gateway.adminKey);
    const input = await upload(
      keyOnly,
      jsonl([chatLine('ours', '@batch-cat/gpt-4o-mini'), chatLine('unknown', '@batch-nope/gpt-4o-mini')]),
    );
    const batch = await waitFor(keyOnly, (await createBatch(keyOnly, input.id)).id, finished);
    expect(batch.status, JSON.stringify(batch.errors)).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 2, completed: 1, failed: 1 });
    const output = await contentLines(keyOnly, batch.output_file_id);
    expect(output.map((line) => [line.custom_id, line.response?.body.model])).toEqual([
      ['ours', 'gpt-4o-mini'],
    ]);
    expect(sentModels()).toEqual([['gpt-4o-mini', 'Bearer sk-batch-catalog']]);
    const errors = await contentLines(keyOnly, batch.error_file_id);
    expect(errors.map((line) => [line.custom_id, line.response?.status_code])).toEqual([['unknown', 404]]);
    expect(errors[0].response?.body.error).toMatchObject({ code: 'virtual_key_not_found', param: 'model' });
  });

  it('fails the validation of a line whose model names no provider, naming body.model', async () => {
    const keyOnly = sdk(gateway.url, gateway.adminKey);
    const input = await upload(keyOnly, jsonl([chatLine('ok', '@batch-cat/gpt-4o-mini'), chatLine('plain')]));
    const batch = await waitFor(keyOnly, (await createBatch(keyOnly, input.id)).id, finished);
    expect(batch.status).toBe('failed');
    expect(batch.errors?.data).toEqual([
      { code: 'missing_provider', message: expect.any(String), param: 'body.model', line: 2 },
    ]);
  });

  it('sends the model as written when the batch was created with a provider', async () => {
    fake.reset();
    const withProvider = sdk(gateway.url, gateway.adminKey, target(fake));
    const input = await upload(withProvider, jsonl([chatLine('as-written', '@batch-cat/gpt-4o-mini')]));
    const batch = await waitFor(withProvider, (await createBatch(withProvider, input.id)).id, finished);
    expect(batch.status).toBe('completed');
    expect(sentModels()).toEqual([['@batch-cat/gpt-4o-mini', 'Bearer sk-test']]);
  });
});
