/**
 * A config's `override_params.metadata` goes into the chat body of every call through the targets that
 * take it (their own, or their parent's: routing/inherit.ts), where OpenAI's limits hold (16 pairs, keys of
 * 64 characters, values of 512, characters counted as code points): over them every such call is a 400.
 * So it is refused when the config is stored (a stored config, created or patched, and a prompt version's
 * inline config), 400 invalid_config naming where it is written, as a prompt version's own
 * `parameters.metadata` is. Not where no call sends it: the parent's at a prompt_id target whose prompt
 * sets its own, any in a text prompt's inline config. A config stored before is read, listed and renamed
 * as before, patched where its metadata stays as stored, and its calls are still refused, naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call, chatWithConfig, client, expectError, type Client, ok } from './http.js';

let gateway: TestGateway;
let fake: FakeUpstream;
let admin: Client;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'config-metadata' });
  gateway = await startGateway();
  admin = client(gateway.url, gateway.adminKey);
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

const template = JSON.stringify([{ role: 'user', content: 'hi' }]);
const pairs = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, 'v']));
const LONG_KEY = 'k'.repeat(65);
/** 65 characters, though JavaScript counts 130. */
const EMOJI_KEY = '😀'.repeat(65);

describe('override_params.metadata of a stored config', () => {
  const target = () => ({ provider: 'openai', api_key: 'sk-test', custom_host: fake.url });
  const fallback = { mode: 'fallback' } as const;

  /** Configs over the limits, with the param naming where the metadata is written. */
  const over = (): Array<[string, Record<string, unknown>, string]> => [
    [
      '17 pairs at the root',
      { ...target(), override_params: { metadata: pairs(17) } },
      'config.override_params.metadata',
    ],
    [
      'a key of 65 characters, on the parent its targets take it from',
      { strategy: fallback, override_params: { metadata: { [LONG_KEY]: 'v' } }, targets: [target()] },
      `config.override_params.metadata.${LONG_KEY}`,
    ],
    [
      'a key of 65 emoji',
      { ...target(), override_params: { metadata: { [EMOJI_KEY]: 'v' } } },
      `config.override_params.metadata.${EMOJI_KEY}`,
    ],
    [
      'a value of 513 characters on the second target',
      {
        strategy: fallback,
        targets: [target(), { ...target(), override_params: { metadata: { k: 'v'.repeat(513) } } }],
      },
      'config.targets[1].override_params.metadata.k',
    ],
  ];

  it('is refused when a config is stored, created or patched, naming where it is written', async () => {
    for (const [what, config, param] of over()) {
      const refused = expectError(
        await admin.post('/configs', { slug: 'too-much-metadata', config }),
        400,
        'invalid_config',
        param,
      );
      expect(refused.message, what).toContain(param);
    }
    expectError(await admin.get('/configs/too-much-metadata'), 404, 'not_found');
    expect((await admin.post('/configs', { slug: 'metadata-patched', config: target() })).status).toBe(200);
    for (const [, config, param] of over()) {
      expectError(await admin.patch('/configs/metadata-patched', { config }), 400, 'invalid_config', param);
    }
    expect((await admin.get('/configs/metadata-patched')).body.version).toBe(1);
  });

  it("is refused in a prompt version's inline config, as its parameters' metadata is", async () => {
    for (const [, config, param] of over()) {
      expectError(
        await admin.post('/prompts', { slug: 'metadata-prompt', string: template, config }),
        400,
        'invalid_config',
        param,
      );
    }
    expectError(
      await admin.post('/prompts', {
        slug: 'metadata-prompt',
        string: template,
        parameters: { metadata: pairs(17) },
        config: target(),
      }),
      400,
      'invalid_body',
      'parameters.metadata',
    );
    expectError(await admin.get('/prompts/metadata-prompt'), 404, 'prompt_not_found');
  });

  it('is stored within the limits, and where every target sets its own over its parent', async () => {
    const within = {
      ...target(),
      override_params: { metadata: { ...pairs(15), ['😀'.repeat(64)]: 'v'.repeat(512) } },
    };
    await ok(admin.post('/configs', { slug: 'metadata-within', config: within }));
    expect((await chatWithConfig(gateway, 'metadata-within')).status).toBe(200);
    // No call takes the parent's: each target's own replaces it (override_params merge key by key).
    await ok(
      admin.post('/configs', {
        slug: 'metadata-shadowed',
        config: {
          strategy: fallback,
          override_params: { metadata: pairs(17) },
          targets: [{ ...target(), override_params: { metadata: { team: 'a' } } }],
        },
      }),
    );
    await ok(chatWithConfig(gateway, 'metadata-shadowed'));
    expect((fake.requests.at(-1)?.body as { metadata?: unknown }).metadata).toEqual({ team: 'a' });
  });

  it("is stored where a target's prompt replaces the parent's, or its calls are text completions", async () => {
    await ok(
      admin.post('/prompts', {
        slug: 'sets-metadata',
        string: template,
        parameters: { model: 'gpt-4o-mini', metadata: { team: 'prompt' } },
      }),
    );
    await ok(
      admin.post('/prompts', {
        slug: 'sets-none',
        string: template,
        parameters: { model: 'gpt-4o-mini' },
      }),
    );
    const under = (prompt: string) => ({
      strategy: fallback,
      override_params: { metadata: pairs(17) },
      targets: [{ ...target(), prompt_id: prompt }],
    });
    // The prompt's parameters are the target's override_params, over its parent's.
    await ok(
      admin.post('/configs', {
        slug: 'metadata-by-prompt',
        config: under('sets-metadata'),
      }),
    );
    await ok(
      call(
        gateway.url,
        gateway.adminKey,
        'POST',
        '/prompts/sets-metadata/completions',
        { variables: {} },
        { 'x-gateway-config': 'metadata-by-prompt' },
      ),
    );
    expect((fake.requests.at(-1)?.body as { metadata?: unknown }).metadata).toEqual({ team: 'prompt' });
    expectError(
      await admin.post('/configs', { slug: 'metadata-no-prompt-one', config: under('sets-none') }),
      400,
      'invalid_config',
      'config.override_params.metadata',
    );
    // A text prompt's calls are completions, whose body has no metadata (routing/overrides.ts).
    await ok(
      admin.post('/prompts', {
        slug: 'text-metadata',
        template_type: 'completion',
        string: 'Say hi',
        parameters: { model: 'gpt-3.5-turbo-instruct' },
        config: { ...target(), override_params: { metadata: pairs(17) } },
      }),
    );
  });

  it("a prompt version that no longer sets its own metadata is refused for the targets whose parent's it replaced, unless forced", async () => {
    const parameters = { model: 'gpt-4o-mini' };
    await ok(
      admin.post('/prompts', {
        slug: 'drops-metadata',
        string: template,
        parameters: { ...parameters, metadata: { team: 'prompt' } },
      }),
    );
    const under = (prompt: string) => ({
      strategy: fallback,
      override_params: { metadata: pairs(17) },
      targets: [{ ...target(), prompt_id: prompt }],
    });
    for (const [slug, prompt] of [
      ['drops-published', 'drops-metadata'],
      ['drops-latest', 'drops-metadata@latest'],
      ['drops-pinned', 'drops-metadata@1'],
    ]) {
      await ok(admin.post('/configs', { slug, config: under(prompt) }));
    }
    const complete = (config: string) =>
      call(
        gateway.url,
        gateway.adminKey,
        'POST',
        '/prompts/drops-metadata/completions',
        { variables: {} },
        { 'x-gateway-config': config },
      );
    // A call names it at the target, which takes the parent's.
    const CALLED_AT = 'config.targets[0].override_params.metadata';
    const version = { string: template, parameters };
    const stored = expectError(
      await admin.put('/prompts/drops-metadata', version),
      409,
      'conflict',
      'string',
    );
    expect(stored.message).toContain('"drops-latest" (config.override_params.metadata)');
    expect(stored.message).toContain('send ?force=true');
    expect((await admin.get('/prompts/drops-metadata')).body.version).toBe(1);
    await ok(admin.put('/prompts/drops-metadata?force=true', version));
    expectError(await complete('drops-latest'), 400, 'invalid_config', CALLED_AT);

    const refused = await admin.put('/prompts/drops-metadata/publish', { version: 2 });
    const error = expectError(refused, 409, 'conflict', 'version');
    expect(error.message).toContain('Publishing version 2 of the prompt "drops-metadata"');
    const { configs } = refused.body.error.dependents as {
      configs: Array<{ slug: string; param: string; reason: string }>;
    };
    // Not the one pinned to version 1, nor the one whose calls are refused already.
    expect(configs.map(({ slug, param }) => ({ slug, param }))).toEqual([
      { slug: 'drops-published', param: 'config.override_params.metadata' },
    ]);
    expect(configs[0].reason).toContain(
      'version 2 of the prompt "drops-metadata" sets no parameters.metadata of its own to replace it',
    );
    expect((await complete('drops-published')).status).toBe(200);
    await ok(admin.put('/prompts/drops-metadata/publish?force=true', { version: 2 }));
    expectError(await complete('drops-published'), 400, 'invalid_config', CALLED_AT);
    expect((await complete('drops-pinned')).status).toBe(200);
  });

  it('a PATCH of a config stored before is refused only for a metadata it sets or changes', async () => {
    const workspace = gateway.server.bootstrap.workspace;
    const config = {
      strategy: fallback,
      targets: [{ ...target(), override_params: { metadata: pairs(17) } }],
    };
    await gateway.server.deps.store.createConfig({
      workspace_id: workspace.id,
      organisation_id: workspace.organisation_id,
      slug: 'metadata-kept',
      name: 'metadata-kept',
      config,
    });
    // Other fields change, the metadata stays as stored: automation patching them keeps working.
    const kept = await ok(
      admin.patch('/configs/metadata-kept', {
        config: { ...config, retry: { attempts: 2 } },
      }),
    );
    expect(kept.body.version).toBe(2);
    expectError(
      await admin.patch('/configs/metadata-kept', {
        config: { ...config, targets: [{ ...target(), override_params: { metadata: pairs(18) } }] },
      }),
      400,
      'invalid_config',
      'config.targets[0].override_params.metadata',
    );
    // Moved to another place, it is set there.
    expectError(
      await admin.patch('/configs/metadata-kept', {
        config: { ...config, override_params: { metadata: pairs(17) }, targets: [target()] },
      }),
      400,
      'invalid_config',
      'config.override_params.metadata',
    );
  });

  it('a config stored before is read, listed and renamed as before; its calls are refused naming it', async () => {
    const workspace = gateway.server.bootstrap.workspace;
    const config = { ...target(), override_params: { metadata: pairs(17) } };
    await gateway.server.deps.store.createConfig({
      workspace_id: workspace.id,
      organisation_id: workspace.organisation_id,
      slug: 'metadata-before',
      name: 'metadata-before',
      config,
    });
    const read = await ok(admin.get('/configs/metadata-before'));
    expect(read.body.config.override_params).toEqual({ metadata: pairs(17) });
    const listed = await admin.get('/configs');
    expect(listed.body.data.map((c: { slug: string }) => c.slug)).toContain('metadata-before');
    expect((await admin.get('/configs/metadata-before/versions')).status).toBe(200);
    await ok(admin.patch('/configs/metadata-before', { name: 'Renamed' }));
    const sent = fake.requests.length;
    expectError(
      await chatWithConfig(gateway, 'metadata-before'),
      400,
      'invalid_config',
      'config.override_params.metadata',
    );
    expect(fake.requests.length).toBe(sent);
  });
});
