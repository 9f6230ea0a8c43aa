/** `gateway semantic-cache …` against a real gateway: entries a request stored, removed by id and by namespace. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliAgainst } from './run-cli.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { target } from '../routing/support.js';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'cli' });
  gateway = await startGateway({
    env: {
      GATEWAY_SEMANTIC_CACHE_VIRTUAL_KEY: 'embedder',
      GATEWAY_SEMANTIC_CACHE_EMBEDDING_MODEL: 'bow-embedding',
    },
  });
  const created = await fetch(`${gateway.url}/virtual-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
    body: JSON.stringify({
      slug: 'embedder',
      name: 'e',
      provider: 'openai',
      api_key: 'sk',
      custom_host: fake.url,
    }),
  });
  expect(created.status).toBe(200);
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

const cli = (args: string[]) => runCliAgainst(gateway, args);

/** Asks a question under a namespace; the cache status and the entry's id. */
async function ask(question: string, namespace: string) {
  const response = await postWithConfig(
    gateway,
    '/chat/completions',
    target(fake, { cache: { mode: 'semantic' } }),
    { model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] },
    { 'x-gateway-cache-namespace': namespace },
  );
  expect(response.status).toBe(200);
  return {
    status: response.headers.get('x-gateway-cache-status'),
    entry: response.headers.get('x-gateway-cache-entry-id') as string,
  };
}

describe('gateway semantic-cache', () => {
  it('deletes an entry by id and clears a namespace', async () => {
    const stored = await ask('What is a lighthouse for?', 'cli');
    await ask('What is a windmill for?', 'cli');
    const deleted = await cli(['semantic-cache', 'delete', stored.entry]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toBe(`Deleted semantic cache entry ${stored.entry}\n`);
    expect((await ask('Lighthouse: what is it for?', 'cli')).status).toBe('SEMANTIC_MISS');

    const cleared = await cli(['--json', 'semantic-cache', 'clear', '--namespace', 'cli']);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(cleared.json()).toMatchObject({ namespace: 'cli', deleted: 2 });
    expect((await ask('Windmill: what is it for?', 'cli')).status).toBe('SEMANTIC_MISS');

    const unknown = await cli(['semantic-cache', 'delete', 'sc_missing']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('sc_missing');
  });
});
