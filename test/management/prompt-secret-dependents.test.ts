/**
 * A prompt version holding secrets outside what it sends its calls through (`parameters.user_api_key`,
 * a header of `parameters.extra_headers`), or a stored config holding secrets of its own beside a virtual key
 * or a stored guardrail it names, sends them with every call to wherever that thing sends them: moving a
 * virtual key (or catalog provider) or a stored guardrail elsewhere, or creating a config under a slug such
 * prompts still name, is refused (409 `conflict`, naming them) unless `?force=true`. Headers given as JSON
 * text are refused (400) rather than kept unredacted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, expectError, ok, type Client } from './http.js';

const template = JSON.stringify([{ role: 'user', content: 'hi' }]);

const bySlug = (list: Array<{ slug: string }>) => [...list].sort((a, b) => a.slug.localeCompare(b.slug));

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

describe('a prompt version giving parameters.extra_headers as JSON text', () => {
  it('is refused naming the field, never stored with its secret shown', async () => {
    const headers = JSON.stringify({ authorization: 'Bearer text-header-secret' });
    const refused = await admin.post('/prompts', {
      slug: 'text-headers',
      string: template,
      parameters: { model: 'gpt-4o-mini', extra_headers: headers },
    });
    expectError(refused, 400, 'invalid_body', 'parameters.extra_headers');
    expect(refused.text).not.toContain('text-header-secret');
    expect((await admin.get('/prompts/text-headers')).status).toBe(404);

    // A version stored before the text form was refused: never shown in the clear, and counted as holding
    // a secret.
    await ok(
      admin.post('/configs', {
        slug: 'lg-cfg',
        config: { provider: 'openai', api_key: 'sk', custom_host: home.url },
      }),
    );
    const legacy = await ok(
      admin.post('/prompts', {
        slug: 'legacy-headers',
        string: template,
        parameters: { model: 'gpt-4o-mini' },
        config: 'lg-cfg',
      }),
    );
    const { id, workspace_id: workspaceId } = legacy.body as { id: string; workspace_id: string };
    const prompt = {
      template_type: 'chat' as const,
      string: template,
      parameters: { model: 'gpt-4o-mini', extra_headers: headers },
      config: 'lg-cfg',
    };
    await gateway.server.deps.store.updatePrompt(workspaceId, id, {
      prompt,
      includes: [],
      references: ['config:lg-cfg'],
    });
    const shown = await ok(admin.get('/prompts/legacy-headers'));
    expect(shown.text).not.toContain('text-header-secret');
    expect(shown.body.parameters.extra_headers).toBe('[REDACTED]');
    const versions = await ok(admin.get('/prompts/legacy-headers/versions'));
    expect(versions.text).not.toContain('text-header-secret');
    const moved = await admin.patch('/configs/lg-cfg', {
      config: { provider: 'openai', api_key: 'sk', custom_host: evil.url },
    });
    expectError(moved, 409, 'conflict', 'config');
    expect(moved.body.error.dependents.prompts).toEqual([
      expect.objectContaining({ slug: 'legacy-headers', versions: [2] }),
    ]);

    await ok(
      admin.post('/prompts', {
        slug: 'object-headers',
        string: template,
        parameters: { model: 'gpt-4o-mini', extra_headers: { authorization: 'Bearer object-secret' } },
      }),
    );
    const again = await admin.put('/prompts/object-headers', {
      string: template,
      parameters: { model: 'gpt-4o-mini', extra_headers: headers },
    });
    expectError(again, 400, 'invalid_body', 'parameters.extra_headers');
    expect((await admin.get('/prompts/object-headers')).body.version).toBe(1);
  });
});

describe('a virtual key or catalog provider that prompts or configs holding secrets send their calls through', () => {
  const key = (slug: string) => ({ slug, provider: 'openai', api_key: `sk-${slug}`, custom_host: home.url });

  it('is not moved to another host or provider, naming them, unless forced', async () => {
    await ok(admin.post('/virtual-keys', key('vk-held')));
    await ok(admin.post('/virtual-keys', key('vk-free')));
    await ok(admin.post('/providers', key('prov-held')));
    const secret = { model: 'gpt-4o-mini', user_api_key: 'user-secret-vk' };
    await ok(
      admin.post('/prompts', {
        slug: 'vk-direct',
        string: template,
        parameters: secret,
        virtual_key: 'vk-held',
      }),
    );
    // Through a stored config naming it: the prompt's secrets go where the key sends the calls.
    await ok(admin.post('/configs', { slug: 'vk-plain', config: { virtual_key: 'vk-held' } }));
    await ok(
      admin.post('/prompts', { slug: 'vk-via', string: template, parameters: secret, config: 'vk-plain' }),
    );
    // A stored config holding a secret of its own beside the key.
    await ok(
      admin.post('/configs', {
        slug: 'vk-own',
        config: {
          strategy: { mode: 'fallback' },
          override_params: { user_api_key: 'config-secret-vk' },
          targets: [
            { provider: 'openai', api_key: 'sk-other', custom_host: home.url },
            { virtual_key: 'vk-held' },
          ],
        },
      }),
    );
    // Naming a key without secrets of its own is no concern.
    await ok(
      admin.post('/prompts', {
        slug: 'vk-nosecret',
        string: template,
        parameters: { model: 'gpt-4o-mini' },
        virtual_key: 'vk-free',
      }),
    );
    await ok(
      admin.post('/prompts', {
        slug: 'prov-direct',
        string: template,
        parameters: secret,
        provider: '@prov-held',
      }),
    );

    const refused = await admin.patch('/virtual-keys/vk-held', {
      custom_host: evil.url,
      api_key: 'sk-moved',
    });
    const error = expectError(refused, 409, 'conflict', 'custom_host');
    expect(error.message).toContain('"vk-direct" (version 1)');
    expect(error.message).toContain('?force=true');
    expect(bySlug(refused.body.error.dependents.prompts)).toEqual([
      expect.objectContaining({ slug: 'vk-direct', versions: [1] }),
      expect.objectContaining({ slug: 'vk-via', versions: [1] }),
    ]);
    expect(refused.body.error.dependents.configs).toEqual([
      expect.objectContaining({ slug: 'vk-own', param: 'config.targets[1].virtual_key' }),
    ]);
    expect(refused.text).not.toContain('user-secret-vk');
    expect(refused.text).not.toContain('config-secret-vk');
    expect((await admin.get('/virtual-keys/vk-held')).body.settings.custom_host).toBe(home.url);

    expectError(
      await admin.patch('/providers/prov-held', { custom_host: evil.url, api_key: 'sk-moved' }),
      409,
      'conflict',
      'custom_host',
    );

    // A rotated key at the same host is no move; a key nothing holding secrets uses moves.
    await ok(admin.patch('/virtual-keys/vk-held', { api_key: 'sk-rotated' }));
    await ok(admin.patch('/virtual-keys/vk-free', { custom_host: evil.url, api_key: 'sk-free-moved' }));

    // A secret held by a target below the node naming the key, at any depth, goes with its calls.
    await ok(admin.post('/virtual-keys', key('vk-deep')));
    await ok(
      admin.post('/configs', {
        slug: 'vk-deep-cfg',
        config: {
          virtual_key: 'vk-deep',
          strategy: { mode: 'fallback' },
          targets: [
            {
              strategy: { mode: 'fallback' },
              targets: [{ request_timeout: 10000, override_params: { user_api_key: 'deep-secret' } }],
            },
          ],
        },
      }),
    );
    const deep = await admin.patch('/virtual-keys/vk-deep', { custom_host: evil.url, api_key: 'sk-moved' });
    expectError(deep, 409, 'conflict', 'custom_host');
    expect(deep.body.error.dependents.configs).toEqual([
      expect.objectContaining({ slug: 'vk-deep-cfg', param: 'config.virtual_key' }),
    ]);

    const forced = await admin.patch('/virtual-keys/vk-held?force=true', {
      custom_host: evil.url,
      api_key: 'sk-moved',
    });
    expect(forced.status, forced.text).toBe(200);
    expect(forced.body.settings.custom_host).toBe(evil.url);
  });
});

describe('a stored guardrail that calls carrying secrets pass through', () => {
  const hook = (webhookURL: string) => ({ 'default.webhook': { webhookURL } });
  const listing = (guardrail: string, extra: Record<string, unknown> = {}) => ({
    provider: 'openai',
    api_key: 'sk-cfg',
    custom_host: home.url,
    input_guardrails: [guardrail],
    ...extra,
  });

  it('is not sent to another address, naming them, unless forced', async () => {
    await ok(admin.post('/guardrails', { slug: 'g-held', guardrail: hook('https://hooks.example/verdict') }));
    await ok(admin.post('/guardrails', { slug: 'g-free', guardrail: hook('https://hooks.example/verdict') }));
    const secret = { model: 'gpt-4o-mini', user_api_key: 'user-secret-g' };
    await ok(
      admin.post('/prompts', {
        slug: 'g-inline',
        string: template,
        parameters: secret,
        config: listing('g-held'),
      }),
    );
    await ok(admin.post('/configs', { slug: 'g-plain', config: listing('g-held') }));
    await ok(
      admin.post('/prompts', { slug: 'g-via', string: template, parameters: secret, config: 'g-plain' }),
    );
    await ok(
      admin.post('/configs', {
        slug: 'g-own',
        config: listing('g-held', { override_params: { user_api_key: 'config-secret-g' } }),
      }),
    );
    // The provider's key goes to the provider, not in the body a webhook is sent.
    await ok(admin.post('/configs', { slug: 'g-keyonly', config: listing('g-free') }));

    const moved = { guardrail: hook('https://elsewhere.example/verdict') };
    const refused = await admin.patch('/guardrails/g-held', moved);
    const error = expectError(refused, 409, 'conflict', 'guardrail');
    expect(error.message).toContain('"g-inline" (version 1)');
    expect(error.message).toContain('?force=true');
    expect(bySlug(refused.body.error.dependents.prompts)).toEqual([
      expect.objectContaining({ slug: 'g-inline', versions: [1] }),
      expect.objectContaining({ slug: 'g-via', versions: [1] }),
    ]);
    expect(refused.body.error.dependents.configs).toEqual([
      expect.objectContaining({ slug: 'g-own', param: 'config.input_guardrails[0]' }),
    ]);
    expect(refused.text).not.toContain('user-secret-g');
    expect(refused.text).not.toContain('config-secret-g');
    expect((await admin.get('/guardrails/g-held')).body.guardrail['default.webhook'].webhookURL).toBe(
      'https://hooks.example/verdict',
    );

    // The same address is no move; a guardrail no call carrying secrets passes through moves.
    await ok(
      admin.patch('/guardrails/g-held', {
        name: 'renamed',
        guardrail: hook('https://hooks.example/verdict'),
      }),
    );
    await ok(admin.patch('/guardrails/g-free', moved));

    const forced = await admin.patch('/guardrails/g-held?force=true', moved);
    expect(forced.status, forced.text).toBe(200);
    expect(forced.body.guardrail['default.webhook'].webhookURL).toBe('https://elsewhere.example/verdict');
  });
});

describe('a config created under a slug that prompts holding secrets still name', () => {
  const at = (host: string) => ({ provider: 'openai', api_key: 'sk-cfg', custom_host: host });

  it('is refused, naming them, unless forced', async () => {
    await ok(admin.post('/configs', { slug: 'rc-cfg', config: at(home.url) }));
    await ok(
      admin.post('/prompts', {
        slug: 'rc-q',
        string: template,
        parameters: { model: 'gpt-4o-mini', user_api_key: 'user-secret-rc' },
        config: 'rc-cfg',
      }),
    );
    await ok(admin.delete('/configs/rc-cfg?force=true'));

    // Recreated with other destinations, it would send the prompt's secrets there.
    const refused = await admin.post('/configs', { slug: 'rc-cfg', config: at(evil.url) });
    const error = expectError(refused, 409, 'conflict', 'slug');
    expect(error.message).toContain('"rc-q" (version 1)');
    expect(error.message).toContain('?force=true');
    expect(refused.body.error.dependents.prompts).toEqual([
      expect.objectContaining({ slug: 'rc-q', versions: [1] }),
    ]);
    expect(refused.text).not.toContain('user-secret-rc');
    expect((await admin.get('/configs/rc-cfg')).status).toBe(404);

    // A slug no prompt holding secrets names is created as before.
    await ok(admin.post('/configs', { slug: 'rc-new', config: at(evil.url) }));
    const forced = await admin.post('/configs?force=true', { slug: 'rc-cfg', config: at(evil.url) });
    expect(forced.status, forced.text).toBe(200);
    // A slug in use is still that refusal, not this one.
    const taken = expectError(
      await admin.post('/configs', { slug: 'rc-cfg', config: at(home.url) }),
      409,
      'conflict',
      'slug',
    );
    expect(taken.message).not.toContain('rc-q');
  });
});

describe('a virtual key or guardrail created under a name that what holds secrets still names', () => {
  it('is refused, naming them, unless forced', async () => {
    const key = (host: string) => ({
      slug: 'rk-vk',
      provider: 'openai',
      api_key: 'sk-rk',
      custom_host: host,
    });
    await ok(admin.post('/virtual-keys', key(home.url)));
    await ok(
      admin.post('/prompts', {
        slug: 'rk-q',
        string: template,
        parameters: { model: 'gpt-4o-mini', user_api_key: 'user-secret-rk' },
        virtual_key: 'rk-vk',
      }),
    );
    await ok(admin.delete('/virtual-keys/rk-vk?force=true'));
    const refused = await admin.post('/virtual-keys', key(evil.url));
    expectError(refused, 409, 'conflict', 'slug');
    expect(refused.body.error.dependents.prompts).toEqual([
      expect.objectContaining({ slug: 'rk-q', versions: [1] }),
    ]);
    expect(refused.text).not.toContain('user-secret-rk');
    expect((await admin.get('/virtual-keys/rk-vk')).status).toBe(404);
    await ok(admin.post('/virtual-keys?force=true', key(evil.url)));

    const hook = (webhookURL: string) => ({ 'default.webhook': { webhookURL } });
    await ok(admin.post('/guardrails', { slug: 'rg-g', guardrail: hook('https://hooks.example/verdict') }));
    await ok(
      admin.post('/configs', {
        slug: 'rg-cfg',
        config: {
          provider: 'openai',
          api_key: 'sk-cfg',
          custom_host: home.url,
          input_guardrails: ['rg-g'],
          override_params: { user_api_key: 'config-secret-rg' },
        },
      }),
    );
    await ok(admin.delete('/guardrails/rg-g?force=true'));
    const again = await admin.post('/guardrails', {
      slug: 'rg-g',
      guardrail: hook('https://elsewhere.example/v'),
    });
    expectError(again, 409, 'conflict', 'slug');
    expect(again.body.error.dependents.configs).toEqual([
      expect.objectContaining({ slug: 'rg-cfg', param: 'config.input_guardrails[0]' }),
    ]);
    expect(again.text).not.toContain('config-secret-rg');
    await ok(
      admin.post('/guardrails?force=true', { slug: 'rg-g', guardrail: hook('https://elsewhere.example/v') }),
    );
  });
});

describe("a config's prompt_id target, which carries its prompt's secrets where the config sends its calls", () => {
  const key = (slug: string) => ({ slug, provider: 'openai', api_key: `sk-${slug}`, custom_host: home.url });
  const hook = (webhookURL: string) => ({ 'default.webhook': { webhookURL } });

  it('keeps the virtual key and the guardrail it goes through from moving, naming it, unless forced', async () => {
    await ok(admin.post('/virtual-keys', key('pt-vk')));
    await ok(admin.post('/virtual-keys', key('pt-vk-free')));
    await ok(admin.post('/guardrails', { slug: 'pt-g', guardrail: hook('https://hooks.example/verdict') }));
    await ok(
      admin.post('/prompts', {
        slug: 'pt-q',
        string: template,
        parameters: { model: 'gpt-4o-mini', user_api_key: 'user-secret-pt' },
      }),
    );
    await ok(
      admin.post('/prompts', { slug: 'pt-plain', string: template, parameters: { model: 'gpt-4o-mini' } }),
    );
    await ok(
      admin.post('/configs', {
        slug: 'pt-cfg',
        config: { strategy: { mode: 'fallback' }, targets: [{ prompt_id: 'pt-q', virtual_key: 'pt-vk' }] },
      }),
    );
    // The prompt_id set above the target naming the key passes down to it.
    await ok(
      admin.post('/configs', {
        slug: 'pt-above',
        config: { prompt_id: 'pt-q@1', strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'pt-vk' }] },
      }),
    );
    await ok(
      admin.post('/configs', {
        slug: 'pt-g-cfg',
        config: {
          provider: 'openai',
          api_key: 'sk-cfg',
          custom_host: home.url,
          input_guardrails: ['pt-g'],
          prompt_id: 'pt-q',
        },
      }),
    );
    // A prompt's inline config sends the target's prompt, secrets and all.
    await ok(
      admin.post('/prompts', {
        slug: 'pt-inline',
        string: template,
        parameters: { model: 'gpt-4o-mini' },
        config: { strategy: { mode: 'fallback' }, targets: [{ prompt_id: 'pt-q', virtual_key: 'pt-vk' }] },
      }),
    );
    // A prompt holding no secret carries none.
    await ok(
      admin.post('/configs', {
        slug: 'pt-free',
        config: {
          strategy: { mode: 'fallback' },
          targets: [{ prompt_id: 'pt-plain', virtual_key: 'pt-vk-free' }],
        },
      }),
    );

    const refused = await admin.patch('/virtual-keys/pt-vk', { custom_host: evil.url, api_key: 'sk-moved' });
    expectError(refused, 409, 'conflict', 'custom_host');
    expect(bySlug(refused.body.error.dependents.configs)).toEqual([
      expect.objectContaining({ slug: 'pt-above', param: 'config.targets[0].virtual_key' }),
      expect.objectContaining({ slug: 'pt-cfg', param: 'config.targets[0].virtual_key' }),
    ]);
    expect(refused.body.error.dependents.prompts).toEqual([
      expect.objectContaining({ slug: 'pt-inline', versions: [1] }),
    ]);
    expect(refused.text).not.toContain('user-secret-pt');

    const judged = await admin.patch('/guardrails/pt-g', { guardrail: hook('https://elsewhere.example/v') });
    expectError(judged, 409, 'conflict', 'guardrail');
    expect(judged.body.error.dependents.configs).toEqual([
      expect.objectContaining({ slug: 'pt-g-cfg', param: 'config.input_guardrails[0]' }),
    ]);

    await ok(admin.patch('/virtual-keys/pt-vk-free', { custom_host: evil.url, api_key: 'sk-free-moved' }));
    await ok(admin.patch('/virtual-keys/pt-vk?force=true', { custom_host: evil.url, api_key: 'sk-moved' }));
  });
});

describe("an inline config's override_params.extra_headers given as JSON text", () => {
  it('is refused naming the place, and one stored before is never shown and counts as a secret', async () => {
    await ok(
      admin.post('/virtual-keys', {
        slug: 'ih-vk',
        provider: 'openai',
        api_key: 'sk-ih',
        custom_host: home.url,
      }),
    );
    const headers = JSON.stringify({ authorization: 'Bearer inline-text-secret' });
    const inline = (extra: unknown) => ({
      strategy: { mode: 'fallback' },
      targets: [{ virtual_key: 'ih-vk', override_params: { extra_headers: extra } }],
    });
    const refused = await admin.post('/prompts', {
      slug: 'ih-q',
      string: template,
      parameters: { model: 'gpt-4o-mini' },
      config: inline(headers),
    });
    expectError(refused, 400, 'invalid_body', 'config.targets[0].override_params.extra_headers');
    expect(refused.text).not.toContain('inline-text-secret');
    expect((await admin.get('/prompts/ih-q')).status).toBe(404);

    const created = await ok(
      admin.post('/prompts', {
        slug: 'ih-q',
        string: template,
        parameters: { model: 'gpt-4o-mini' },
        config: inline({ authorization: 'Bearer inline-object-secret' }),
      }),
    );
    const { id, workspace_id: workspaceId } = created.body as { id: string; workspace_id: string };
    // A version stored before the text form was refused.
    await gateway.server.deps.store.updatePrompt(workspaceId, id, {
      prompt: {
        template_type: 'chat',
        string: template,
        parameters: { model: 'gpt-4o-mini' },
        config: inline(headers),
      },
      includes: [],
      references: ['virtual_key:ih-vk'],
    });
    const shown = await ok(admin.get('/prompts/ih-q'));
    expect(shown.text).not.toContain('inline-text-secret');
    expect(shown.body.config.targets[0].override_params.extra_headers).toBe('[REDACTED]');
    const versions = await ok(admin.get('/prompts/ih-q/versions'));
    expect(versions.text).not.toContain('inline-text-secret');
    const moved = await admin.patch('/virtual-keys/ih-vk', { custom_host: evil.url, api_key: 'sk-moved' });
    expectError(moved, 409, 'conflict', 'custom_host');
    expect(moved.body.error.dependents.prompts).toEqual([
      expect.objectContaining({ slug: 'ih-q', versions: [1, 2] }),
    ]);
  });
});

describe('an archived config holding secrets of its own', () => {
  const hook = (webhookURL: string) => ({ 'default.webhook': { webhookURL } });

  it('keeps what it names from moving, so that making it active again sends them nowhere new', async () => {
    await ok(
      admin.post('/virtual-keys', {
        slug: 'ar-vk',
        provider: 'openai',
        api_key: 'sk-ar',
        custom_host: home.url,
      }),
    );
    await ok(
      admin.post('/configs', {
        slug: 'ar-cfg',
        config: { virtual_key: 'ar-vk', override_params: { user_api_key: 'config-secret-ar' } },
      }),
    );
    await ok(admin.post('/guardrails', { slug: 'ar-g', guardrail: hook('https://hooks.example/verdict') }));
    await ok(
      admin.post('/configs', {
        slug: 'ar-g-cfg',
        config: {
          provider: 'openai',
          api_key: 'sk-cfg',
          custom_host: home.url,
          input_guardrails: ['ar-g'],
          override_params: { user_api_key: 'config-secret-ar-g' },
        },
      }),
    );
    await ok(admin.patch('/configs/ar-cfg', { status: 'archived' }));
    await ok(admin.patch('/configs/ar-g-cfg', { status: 'archived' }));

    const moved = await admin.patch('/virtual-keys/ar-vk', { custom_host: evil.url, api_key: 'sk-ar-moved' });
    expectError(moved, 409, 'conflict', 'custom_host');
    expect(moved.body.error.dependents.configs).toEqual([
      expect.objectContaining({ slug: 'ar-cfg', param: 'config.virtual_key' }),
    ]);
    expect(moved.text).not.toContain('config-secret-ar');
    const sent = await admin.patch('/guardrails/ar-g', { guardrail: hook('https://elsewhere.example/v') });
    expectError(sent, 409, 'conflict', 'guardrail');
    expect(sent.body.error.dependents.configs).toEqual([
      expect.objectContaining({ slug: 'ar-g-cfg', param: 'config.input_guardrails[0]' }),
    ]);

    await ok(admin.patch('/configs/ar-cfg', { status: 'active' }));
    expect((await admin.get('/virtual-keys/ar-vk')).body.settings.custom_host).toBe(home.url);
    await ok(
      admin.patch('/virtual-keys/ar-vk?force=true', { custom_host: evil.url, api_key: 'sk-ar-moved' }),
    );
  });
});

describe("a config, virtual key or guardrail created under a slug that is another's id", () => {
  const at = (host: string) => ({ provider: 'openai', api_key: 'sk-cfg', custom_host: host });
  const hook = (webhookURL: string) => ({ 'default.webhook': { webhookURL } });

  it('is judged as a new name, so prompts naming that id keep their secrets from it', async () => {
    const config = await ok(admin.post('/configs', { slug: 'id-cfg', config: at(home.url) }));
    const configId = config.body.id as string;
    await ok(
      admin.post('/prompts', {
        slug: 'id-q',
        string: template,
        parameters: { model: 'gpt-4o-mini', user_api_key: 'user-secret-id' },
        config: configId,
      }),
    );
    const refused = await admin.post('/configs', { slug: configId, config: at(evil.url) });
    expectError(refused, 409, 'conflict', 'slug');
    expect(refused.body.error.dependents.prompts).toEqual([
      expect.objectContaining({ slug: 'id-q', versions: [1] }),
    ]);
    expect(refused.text).not.toContain('user-secret-id');

    const key = await ok(
      admin.post('/virtual-keys', {
        slug: 'id-vk',
        provider: 'openai',
        api_key: 'sk-id',
        custom_host: home.url,
      }),
    );
    const keyId = key.body.id as string;
    await ok(
      admin.post('/prompts', {
        slug: 'id-vq',
        string: template,
        parameters: { model: 'gpt-4o-mini', user_api_key: 'user-secret-idv' },
        virtual_key: keyId,
      }),
    );
    const twin = { slug: keyId, provider: 'openai', api_key: 'sk-id', custom_host: evil.url };
    expectError(await admin.post('/virtual-keys', twin), 409, 'conflict', 'slug');

    const guardrail = await ok(
      admin.post('/guardrails', { slug: 'id-g', guardrail: hook('https://hooks.example/verdict') }),
    );
    const guardrailId = guardrail.body.id as string;
    await ok(
      admin.post('/configs', {
        slug: 'id-g-cfg',
        config: {
          ...at(home.url),
          input_guardrails: [guardrailId],
          override_params: { user_api_key: 's-idg' },
        },
      }),
    );
    const again = await admin.post('/guardrails', {
      slug: guardrailId,
      guardrail: hook('https://elsewhere.example/v'),
    });
    expectError(again, 409, 'conflict', 'slug');
    expect(again.body.error.dependents.configs).toEqual([
      expect.objectContaining({ slug: 'id-g-cfg', param: 'config.input_guardrails[0]' }),
    ]);
  });
});

describe('extra_headers given as anything but an object of header names and values', () => {
  const arrayHeaders = [['authorization', 'Bearer array-header-secret']];
  const textHeaders = JSON.stringify({ authorization: 'Bearer config-text-secret' });

  it("is refused in a prompt's parameters and a stored config's override_params, naming the field", async () => {
    const prompt = await admin.post('/prompts', {
      slug: 'ah-q',
      string: template,
      parameters: { model: 'gpt-4o-mini', extra_headers: arrayHeaders },
    });
    expectError(prompt, 400, 'invalid_body', 'parameters.extra_headers');
    expect(prompt.text).not.toContain('array-header-secret');
    const inline = await admin.post('/prompts', {
      slug: 'ah-q',
      string: template,
      parameters: { model: 'gpt-4o-mini' },
      config: { provider: 'openai', api_key: 'sk', override_params: { extra_headers: arrayHeaders } },
    });
    expectError(inline, 400, 'invalid_body', 'config.override_params.extra_headers');

    for (const extra of [textHeaders, arrayHeaders]) {
      const config = await admin.post('/configs', {
        slug: 'ah-cfg',
        config: { provider: 'openai', api_key: 'sk', override_params: { extra_headers: extra } },
      });
      expectError(config, 400, 'invalid_body', 'config.override_params.extra_headers');
      expect(config.text).not.toContain('secret');
    }
    expect((await admin.get('/configs/ah-cfg')).status).toBe(404);
  });

  it('stored before, is never shown and counts as a secret', async () => {
    await ok(
      admin.post('/virtual-keys', {
        slug: 'ah-vk',
        provider: 'openai',
        api_key: 'sk-ah',
        custom_host: home.url,
      }),
    );
    const created = await ok(admin.post('/configs', { slug: 'ah-old', config: { virtual_key: 'ah-vk' } }));
    const config = created.body as { id: string; workspace_id: string };
    await gateway.server.deps.store.updateConfig(config.workspace_id, config.id, {
      config: { virtual_key: 'ah-vk', override_params: { extra_headers: textHeaders } },
    });
    const shown = await ok(admin.get('/configs/ah-old'));
    expect(shown.text).not.toContain('config-text-secret');
    expect(shown.body.config.override_params.extra_headers).toBe('[REDACTED]');
    expect((await ok(admin.get('/configs/ah-old/versions'))).text).not.toContain('config-text-secret');

    const prompt = await ok(
      admin.post('/prompts', { slug: 'ah-old-q', string: template, parameters: { model: 'gpt-4o-mini' } }),
    );
    const stored = prompt.body as { id: string; workspace_id: string };
    await gateway.server.deps.store.updatePrompt(stored.workspace_id, stored.id, {
      prompt: {
        template_type: 'chat',
        string: template,
        parameters: { model: 'gpt-4o-mini', extra_headers: arrayHeaders },
        virtual_key: 'ah-vk',
      },
      includes: [],
      references: ['virtual_key:ah-vk'],
    });
    const promptShown = await ok(admin.get('/prompts/ah-old-q'));
    expect(promptShown.text).not.toContain('array-header-secret');
    expect(promptShown.body.parameters.extra_headers).toBe('[REDACTED]');

    const moved = await admin.patch('/virtual-keys/ah-vk', { custom_host: evil.url, api_key: 'sk-moved' });
    expectError(moved, 409, 'conflict', 'custom_host');
    expect(moved.body.error.dependents.configs).toEqual([
      expect.objectContaining({ slug: 'ah-old', param: 'config.virtual_key' }),
    ]);
    expect(moved.body.error.dependents.prompts).toEqual([
      expect.objectContaining({ slug: 'ah-old-q', versions: [2] }),
    ]);
  });
});

describe('keys a config holds that never go where a virtual key sends its calls', () => {
  const key = (slug: string) => ({ slug, provider: 'openai', api_key: `sk-${slug}`, custom_host: home.url });
  const moved = () => ({ custom_host: evil.url, api_key: 'sk-moved' });

  it('keep nothing from moving: a target naming its own provider, or a root key above a target naming the key', async () => {
    await ok(admin.post('/virtual-keys', key('ov-below')));
    // The first target names its own provider: it never uses the key above it, nor sends it its api_key.
    await ok(
      admin.post('/configs', {
        slug: 'ov-below-cfg',
        config: {
          virtual_key: 'ov-below',
          strategy: { mode: 'fallback' },
          targets: [
            { provider: 'openai', api_key: 'sk-own-target', custom_host: home.url },
            { request_timeout: 10000 },
          ],
        },
      }),
    );
    const below = await admin.patch('/virtual-keys/ov-below', moved());
    expect(below.status, below.text).toBe(200);

    await ok(admin.post('/virtual-keys', key('ov-above')));
    // A target naming a virtual key takes no provider identity from above it: the root's api_key stays.
    await ok(
      admin.post('/configs', {
        slug: 'ov-above-cfg',
        config: {
          provider: 'openai',
          api_key: 'sk-root',
          custom_host: home.url,
          strategy: { mode: 'fallback' },
          targets: [{ request_timeout: 10000 }, { virtual_key: 'ov-above' }],
        },
      }),
    );
    const above = await admin.patch('/virtual-keys/ov-above', moved());
    expect(above.status, above.text).toBe(200);

    // What a target below the key's node does send there still counts: override_params pass down.
    await ok(admin.post('/virtual-keys', key('ov-sent')));
    await ok(
      admin.post('/configs', {
        slug: 'ov-sent-cfg',
        config: {
          virtual_key: 'ov-sent',
          strategy: { mode: 'fallback' },
          targets: [{ request_timeout: 10000, override_params: { user_api_key: 'sent-secret' } }],
        },
      }),
    );
    const sent = await admin.patch('/virtual-keys/ov-sent', moved());
    expectError(sent, 409, 'conflict', 'custom_host');
    expect(sent.body.error.dependents.configs).toEqual([
      expect.objectContaining({ slug: 'ov-sent-cfg', param: 'config.virtual_key' }),
    ]);
  });
});
