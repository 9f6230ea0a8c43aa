/**
 * A prompt version naming no destination of its own whose `parameters.model` is written
 * `@<provider_slug>/<model>` sends its calls to that catalog provider: it counts among what uses the
 * provider, as the same version written `provider: "@<provider_slug>"` does — deleting the provider or
 * giving it another provider type is a 409 naming the prompt, and so is moving it while the version holds
 * secrets of its own — and storing such a version is refused when the workspace has no such provider.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { addCatalogProvider, call, client, expectError, ok, type Client } from './http.js';

const template = JSON.stringify([{ role: 'user', content: 'hi' }]);

let gateway: TestGateway;
let home: FakeUpstream;
let evil: FakeUpstream;
let admin: Client;

beforeAll(async () => {
  home = await startFakeOpenAI({ name: 'home' });
  evil = await startFakeOpenAI({ name: 'evil' });
  gateway = await startGateway();
  admin = client(gateway.url, gateway.adminKey);
});

afterAll(async () => {
  await gateway?.close();
  await home?.close();
  await evil?.close();
});

const complete = (slug: string) =>
  call(gateway.url, gateway.adminKey, 'POST', `/prompts/${slug}/completions`, { variables: {} });

describe('a catalog provider that a prompt names by its model (@slug/model)', () => {
  it('is not deleted while the prompt names it, unless forced', async () => {
    await addCatalogProvider(admin, 'rv-cat', 'sk-rv-cat', home.url);
    await ok(
      admin.post('/prompts', {
        slug: 'rv-model',
        string: template,
        parameters: { model: '@rv-cat/gpt-4o-mini' },
      }),
    );
    expect((await complete('rv-model')).status).toBe(200);

    const refused = await admin.delete('/providers/rv-cat');
    const error = expectError(refused, 409, 'conflict', 'slug');
    expect(error.message).toContain('"rv-model" (version 1)');
    expect(refused.body.error.dependents.prompts).toEqual([
      expect.objectContaining({ slug: 'rv-model', versions: [1] }),
    ]);
    expect((await complete('rv-model')).status).toBe(200);

    const changed = await admin.patch('/providers/rv-cat', { provider: 'groq', api_key: 'sk-groq' });
    expectError(changed, 409, 'conflict', 'provider');
    expect(changed.body.error.dependents.prompts).toEqual([
      expect.objectContaining({ slug: 'rv-model', versions: [1] }),
    ]);

    // A version naming a destination of its own sends the model there as written: it does not count.
    await addCatalogProvider(admin, 'rv-free', 'sk-rv-free', home.url);
    await ok(admin.post('/virtual-keys', { slug: 'rv-vk', provider: 'openai', api_key: 'sk-vk' }));
    await ok(
      admin.post('/prompts', {
        slug: 'rv-own-destination',
        string: template,
        parameters: { model: '@rv-free/gpt-4o-mini' },
        virtual_key: 'rv-vk',
      }),
    );
    await ok(admin.delete('/providers/rv-free'));

    await ok(admin.delete('/providers/rv-cat?force=true'));
  });

  it('counts a version stored without its references, once they are recorded', async () => {
    await addCatalogProvider(admin, 'rv-old', 'sk-rv-old', home.url);
    const created = await ok(
      admin.post('/prompts', {
        slug: 'rv-old-model',
        string: template,
        parameters: { model: 'gpt-4o-mini' },
      }),
    );
    const { id, workspace_id: workspaceId } = created.body as { id: string; workspace_id: string };
    // Stored as by a node that records no references (or before 0031 marked them to be read again).
    await gateway.server.deps.store.updatePrompt(workspaceId, id, {
      prompt: {
        template_type: 'chat',
        string: template,
        parameters: { model: '@rv-old/gpt-4o-mini' },
      },
      includes: [],
    });
    const refused = await admin.delete('/providers/rv-old');
    expectError(refused, 409, 'conflict', 'slug');
    expect(refused.body.error.dependents.prompts).toEqual([
      expect.objectContaining({ slug: 'rv-old-model', versions: [2] }),
    ]);
  });

  it('is not moved while the prompt holds secrets of its own, unless forced', async () => {
    await addCatalogProvider(admin, 'rv-held', 'sk-rv-held', home.url);
    await ok(
      admin.post('/prompts', {
        slug: 'rv-secret',
        string: template,
        parameters: { model: '@rv-held/gpt-4o-mini', user_api_key: 'user-secret-rv' },
      }),
    );
    const refused = await admin.patch('/providers/rv-held', { custom_host: evil.url, api_key: 'sk-moved' });
    expectError(refused, 409, 'conflict', 'custom_host');
    expect(refused.body.error.dependents.prompts).toEqual([
      expect.objectContaining({ slug: 'rv-secret', versions: [1] }),
    ]);
    expect(refused.text).not.toContain('user-secret-rv');

    // Deleted anyway, it is not created again under the slug the prompt still names.
    await ok(admin.delete('/providers/rv-held?force=true'));
    const again = await admin.post('/providers', {
      slug: 'rv-held',
      provider: 'openai',
      api_key: 'sk-evil',
      custom_host: evil.url,
    });
    expectError(again, 409, 'conflict', 'slug');
    expect(again.body.error.dependents.prompts).toEqual([
      expect.objectContaining({ slug: 'rv-secret', versions: [1] }),
    ]);
  });
});
