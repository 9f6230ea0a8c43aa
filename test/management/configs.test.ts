import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatWithConfig, client, expectError, type Client, ok } from './http.js';

let gateway: TestGateway;
let fake: FakeUpstream;
let admin: Client;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'configs' });
  gateway = await startGateway();
  admin = client(gateway.url, gateway.adminKey);
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

describe('/v1/configs', () => {
  it('stores, reads, versions, uses and deletes a config; credentials inside are redacted', async () => {
    const v1 = {
      provider: 'openai',
      api_key: 'sk-config-secret-v1',
      custom_host: fake.url,
      retry: { attempts: 1 },
    };
    const created = await ok(
      admin.post('/configs', { slug: 'prod-chat', name: 'Production chat', config: v1 }),
    );
    expect(created.body).toMatchObject({
      object: 'config',
      id: expect.any(String),
      slug: 'prod-chat',
      name: 'Production chat',
      version: 1,
      status: 'active',
      config: { provider: 'openai', api_key: '[REDACTED]', custom_host: fake.url, retry: { attempts: 1 } },
    });
    expect(created.text).not.toContain('sk-config-secret');

    for (const address of ['prod-chat', created.body.id]) {
      const fetched = await admin.get(`/configs/${address}`);
      expect(fetched.status).toBe(200);
      expect(fetched.body.id).toBe(created.body.id);
      expect(fetched.body.config.api_key).toBe('[REDACTED]');
    }
    const listed = await admin.get('/configs');
    expect(listed.body.data.map((c: { slug: string }) => c.slug)).toContain('prod-chat');
    expect(listed.text).not.toContain('sk-config-secret');

    // The stored config routes a real call, by slug and by id.
    expect((await chatWithConfig(gateway, 'prod-chat')).status).toBe(200);
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-config-secret-v1');
    expect((await chatWithConfig(gateway, created.body.id)).status).toBe(200);

    // A renamed config keeps its version; a new config makes version 2 and is used at once.
    const renamed = await admin.patch('/configs/prod-chat', { name: 'Renamed' });
    expect(renamed.body).toMatchObject({ name: 'Renamed', version: 1 });
    const v2 = { ...v1, api_key: 'sk-config-secret-v2' };
    const updated = await ok(admin.patch(`/configs/${created.body.id}`, { config: v2 }));
    expect(updated.body).toMatchObject({ version: 2, config: { api_key: '[REDACTED]' } });
    expect((await chatWithConfig(gateway, 'prod-chat')).status).toBe(200);
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-config-secret-v2');

    const versions = await admin.get('/configs/prod-chat/versions');
    expect(versions.status).toBe(200);
    expect(versions.body.object).toBe('list');
    expect(versions.body.data.map((v: { version: number }) => v.version)).toEqual([1, 2]);
    expect(versions.body.data[0]).toMatchObject({
      config_id: created.body.id,
      config: { api_key: '[REDACTED]' },
    });
    expect(versions.text).not.toContain('sk-config-secret');

    // Archived configs are not used by requests.
    expect((await admin.patch('/configs/prod-chat', { status: 'archived' })).body.status).toBe('archived');
    expectError(await chatWithConfig(gateway, 'prod-chat'), 404, 'config_not_found');
    await admin.patch('/configs/prod-chat', { status: 'active' });
    expect((await chatWithConfig(gateway, 'prod-chat')).status).toBe(200);

    const deleted = await admin.delete('/configs/prod-chat');
    expect(deleted.body).toEqual({ object: 'config.deleted', id: created.body.id, deleted: true });
    expectError(await admin.get('/configs/prod-chat'), 404, 'not_found', 'id');
    expectError(await chatWithConfig(gateway, 'prod-chat'), 404, 'config_not_found');
  });

  // PATCH used to answer 500 now and then when the log thread had just written the record of a call
  // (SQLite: the update's transaction read, then could not become a writer on a stale snapshot).
  it('renames and re-versions a config right after calls that are being logged, 50 times', async () => {
    const config = { provider: 'openai', api_key: 'sk-loop', custom_host: fake.url, retry: { attempts: 1 } };
    for (let round = 0; round < 50; round++) {
      const slug = `loop-${round}`;
      expect((await admin.post('/configs', { slug, config })).status).toBe(200);
      expect((await chatWithConfig(gateway, slug)).status).toBe(200);
      await ok(admin.patch(`/configs/${slug}`, { name: `Renamed ${round}` }));
      expect((await chatWithConfig(gateway, slug)).status).toBe(200);
      const updated = await ok(
        admin.patch(`/configs/${slug}`, { config: { ...config, api_key: 'sk-loop-2' } }),
      );
      expect(updated.body.version).toBe(2);
    }
  });

  it('answers concurrent PATCHes of one config with distinct versions while calls are logged', async () => {
    const config = { provider: 'openai', api_key: 'sk-many', custom_host: fake.url, retry: { attempts: 1 } };
    expect((await admin.post('/configs', { slug: 'many-patches', config })).status).toBe(200);
    const replies = await Promise.all([
      ...Array.from({ length: 20 }, (_, n) =>
        admin.patch('/configs/many-patches', { config: { ...config, api_key: `sk-many-${n}` } }),
      ),
      ...Array.from({ length: 10 }, () => chatWithConfig(gateway, 'many-patches')),
    ]);
    for (const reply of replies) expect(reply.status, reply.text).toBe(200);
    const versions = replies.slice(0, 20).map((reply) => reply.body.version as number);
    expect(versions.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    const listed = await admin.get('/configs/many-patches/versions');
    expect(listed.body.data).toHaveLength(21);
  });

  it('a config naming a provider with no key is accepted: the request may send Authorization', async () => {
    const created = await ok(
      admin.post('/configs', { slug: 'bring-your-key', config: { provider: 'openai' } }),
    );
    expect(created.body.name).toBe('bring-your-key');
  });

  it.each([
    [{ config: { retry: { attempts: 1 } } }, 'invalid_body', 'slug'],
    [{ slug: 'x' }, 'invalid_body', 'config'],
    [{ slug: 'x', config: 'provider=openai' }, 'invalid_body', 'config'],
    [{ slug: '{json}', config: { retry: { attempts: 1 } } }, 'invalid_body', 'slug'],
    [{ slug: 'x', config: { retry: { attempts: 1 } }, version: 3 }, 'invalid_body', 'version'],
    [{ slug: 'x', config: { retry: { attempts: 'twice' } } }, 'invalid_config', 'config.retry.attempts'],
    [{ slug: 'x', config: { provdier: 'openai' } }, 'invalid_config', 'config.provdier'],
    [{ slug: 'x', config: {} }, 'invalid_config', undefined],
    [
      {
        slug: 'x',
        config: {
          strategy: { mode: 'fallback' },
          targets: [{ provider: 'openai', api_key: 'k', weight: -1 }],
        },
      },
      'invalid_config',
      'config.targets[0].weight',
    ],
    [
      { slug: 'x', config: { cb_config: { failure_threshold: 1, cooldown_interval: 10 } } },
      'invalid_config',
      'config.cb_config.cooldown_interval',
    ],
    [
      { slug: 'x', config: { provider: 'no-such-provider', api_key: 'k' } },
      'unknown_provider',
      'config.provider',
    ],
    [
      {
        slug: 'x',
        config: {
          strategy: { mode: 'fallback' },
          targets: [{ provider: 'openai', api_key: 'k' }, { provider: 'nope' }],
        },
      },
      'unknown_provider',
      'config.targets[1].provider',
    ],
  ])('refuses %j (%s naming %s)', async (body, code, param) => {
    const error = expectError(await admin.post('/configs', body), 400, code, param);
    if (code === 'invalid_config') expect(error.param ?? '').toMatch(/^config/);
  });

  it('a config sent back as shown keeps its credentials; moved to another host, [REDACTED] is refused', async () => {
    const config = { provider: 'openai', api_key: 'sk-kept-secret-1', custom_host: fake.url };
    await ok(admin.post('/configs', { slug: 'edited-as-shown', config }));
    // An editor sends back what it was shown, with one setting changed.
    const shown = (await admin.get('/configs/edited-as-shown')).body.config;
    expect(shown.api_key).toBe('[REDACTED]');
    const edited = await ok(
      admin.patch('/configs/edited-as-shown', {
        config: { ...shown, retry: { attempts: 1 } },
      }),
    );
    expect(edited.body.version).toBe(2);
    expect((await chatWithConfig(gateway, 'edited-as-shown')).status).toBe(200);
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-kept-secret-1');
    // The stored key never goes to a host it was not stored for.
    expectError(
      await admin.patch('/configs/edited-as-shown', {
        config: { ...shown, custom_host: 'http://127.0.0.1:9/v1' },
      }),
      400,
      'invalid_body',
      'config.api_key',
    );
    expect((await admin.get('/configs/edited-as-shown')).body.version).toBe(2);
  });

  it("refuses a [REDACTED] key that a target below, taking its parent's key, would send to a new host", async () => {
    const config = {
      provider: 'openai',
      api_key: 'sk-REAL-SECRET',
      strategy: { mode: 'fallback' },
      targets: [{ retry: { attempts: 1 } }],
    };
    const created = await ok(admin.post('/configs', { slug: 'inherited-key', config }));
    const storedConfig = () =>
      gateway.server.deps.store.getConfig(created.body.workspace_id as string, 'inherited-key');
    const shown = (await admin.get('/configs/inherited-key')).body.config;
    expect(shown.api_key).toBe('[REDACTED]');
    const error = expectError(
      await admin.patch('/configs/inherited-key', {
        config: { ...shown, targets: [{ retry: { attempts: 1 }, custom_host: 'https://evil.example/v1' }] },
      }),
      400,
      'invalid_body',
      'config.api_key',
    );
    expect(error.message).not.toContain('sk-REAL-SECRET');
    expect(await storedConfig()).toMatchObject({ version: 1, config });
    // Another setting of the target changed, its address not: the key is kept.
    const edited = await ok(
      admin.patch('/configs/inherited-key', { config: { ...shown, targets: [{ retry: { attempts: 2 } }] } }),
    );
    expect(edited.body.version).toBe(2);
    expect((await storedConfig())?.config).toEqual({
      ...config,
      targets: [{ retry: { attempts: 2 } }],
    });
  });

  it("refuses a [REDACTED] key once a target below drops its own key (it would take its parent's)", async () => {
    const config = {
      provider: 'openai',
      api_key: 'sk-root-secret',
      custom_host: fake.url,
      strategy: { mode: 'fallback' },
      targets: [{ custom_host: 'https://evil.example/v1', request_timeout: 10000, api_key: 'sk-own' }],
    };
    const created = await ok(admin.post('/configs', { slug: 'dropped-key', config }));
    const shown = (await admin.get('/configs/dropped-key')).body.config;
    const error = expectError(
      await admin.patch('/configs/dropped-key', {
        config: { ...shown, targets: [{ custom_host: 'https://evil.example/v1', request_timeout: 10000 }] },
      }),
      400,
      'invalid_body',
      'config.api_key',
    );
    expect(error.message).not.toContain('sk-root-secret');
    const stored = await gateway.server.deps.store.getConfig(
      created.body.workspace_id as string,
      'dropped-key',
    );
    expect(stored).toMatchObject({ version: 1, config });
    // A key added where there was none is a change too; the same places with a new key are not.
    expectError(
      await admin.patch('/configs/dropped-key', {
        config: { ...shown, targets: [{ ...shown.targets[0], cloudc_access_key_id: 'AKIA-new' }] },
      }),
      400,
      'invalid_body',
      'config.api_key',
    );
    await ok(
      admin.patch('/configs/dropped-key', {
        config: { ...shown, targets: [{ ...shown.targets[0], api_key: 'sk-own-rotated' }] },
      }),
    );
  });

  it('refuses a [REDACTED] override_params secret once a target below goes to another host', async () => {
    const config = {
      override_params: { user_api_key: 'user-REAL-SECRET' },
      strategy: { mode: 'fallback' },
      targets: [{ provider: 'openai', api_key: 'sk-ours', custom_host: fake.url }],
    };
    await ok(admin.post('/configs', { slug: 'override-secret', config }));
    const shown = (await admin.get('/configs/override-secret')).body.config;
    expect(shown.override_params).toEqual({ user_api_key: '[REDACTED]' });
    expectError(
      await admin.patch('/configs/override-secret', {
        config: {
          ...shown,
          targets: [{ provider: 'openai', api_key: 'sk-theirs', custom_host: 'https://evil.example/v1' }],
        },
      }),
      400,
      'invalid_body',
      'config.override_params.user_api_key',
    );
    expect((await admin.get('/configs/override-secret')).body.version).toBe(1);
  });

  it('shows an AWS access key id as a credential, as virtual keys do, and keeps it when sent back', async () => {
    const config = {
      provider: 'bedrock',
      cloudc_access_key_id: 'AKIAEXAMPLEEXAMPLE12',
      cloudc_secret_access_key: 'aws-secret-access-key',
      cloudc_region: 'us-east-1',
    };
    const created = await ok(admin.post('/configs', { slug: 'aws-keys', config }));
    expect(created.text).not.toContain('AKIAEXAMPLEEXAMPLE12');
    const shown = (await admin.get('/configs/aws-keys')).body.config;
    expect(shown).toEqual({
      ...config,
      cloudc_access_key_id: '[REDACTED]',
      cloudc_secret_access_key: '[REDACTED]',
    });
    expect((await admin.get('/configs')).text).not.toContain('AKIAEXAMPLEEXAMPLE12');
    await ok(admin.patch('/configs/aws-keys', { config: { ...shown, retry: { attempts: 1 } } }));
    expect((await admin.get('/configs/aws-keys/versions')).text).not.toContain('AKIAEXAMPLEEXAMPLE12');
    const stored = await gateway.server.deps.store.getConfig(created.body.workspace_id, 'aws-keys');
    expect(stored?.config).toMatchObject({ ...config, retry: { attempts: 1 } });
  });

  it('refuses a config naming a stored guardrail the workspace does not have', async () => {
    expectError(
      await admin.post('/configs', {
        slug: 'ghost-guardrail',
        config: { provider: 'openai', api_key: 'k', input_guardrails: ['no-such-guardrail'] },
      }),
      400,
      'invalid_config',
      'config.input_guardrails[0]',
    );
  });

  it('refuses a config naming a virtual key, catalog provider, prompt or config the workspace does not have', async () => {
    const base = { provider: 'openai', api_key: 'k' };
    const strategy = { mode: 'fallback' };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ strategy, targets: [base, { virtual_key: 'no-such-key' }] }, 'config.targets[1].virtual_key'],
      [{ strategy, targets: [{ provider: '@no-such-provider' }] }, 'config.targets[0].provider'],
      [{ ...base, prompt_id: 'no-such-prompt' }, 'config.prompt_id'],
      [{ ...base, strategy, targets: [{ prompt_id: 'no-such-prompt@2' }] }, 'config.targets[0].prompt_id'],
      [
        { ...base, cache: { mode: 'semantic', embedding: { virtual_key: 'no-such-key' } } },
        'config.cache.embedding.virtual_key',
      ],
      [
        { ...base, cache: { mode: 'semantic', embedding: { config: 'no-such-config' } } },
        'config.cache.embedding.config',
      ],
    ];
    for (const [config, param] of cases) {
      expectError(
        await admin.post('/configs', { slug: 'ghost-names', config }),
        400,
        'invalid_config',
        param,
      );
    }
    expectError(await admin.get('/configs/ghost-names'), 404, 'not_found');

    // On a new version too, and once they exist, the same names are taken.
    expect((await admin.post('/configs', { slug: 'names-later', config: base })).status).toBe(200);
    expectError(
      await admin.patch('/configs/names-later', {
        config: { strategy, targets: [base, { virtual_key: 'later-key' }] },
      }),
      400,
      'invalid_config',
      'config.targets[1].virtual_key',
    );
    const key = await ok(
      admin.post('/virtual-keys', {
        slug: 'later-key',
        provider: 'openai',
        api_key: 'sk-later',
      }),
    );
    await ok(
      admin.post('/prompts', {
        slug: 'later-prompt',
        string: JSON.stringify([{ role: 'user', content: 'hi' }]),
      }),
    );
    expectError(
      await admin.patch('/configs/names-later', { config: { ...base, prompt_id: 'later-prompt@2' } }),
      400,
      'invalid_config',
      'config.prompt_id',
    );
    await ok(
      admin.patch('/configs/names-later', {
        config: {
          strategy,
          targets: [base, { virtual_key: 'later-key' }, { ...base, prompt_id: 'later-prompt@1' }],
          cache: { mode: 'semantic', embedding: { virtual_key: 'later-key', config: 'names-later' } },
        },
      }),
    );

    // A revoked key's calls fail: a config naming one is refused as a missing one is.
    // The API has no revoking; a credential stored revoked is as good as gone to a call.
    await gateway.server.deps.store.updateCredential(key.body.workspace_id, 'virtual_key', 'later-key', {
      status: 'revoked',
    });
    expectError(
      await admin.post('/configs', { slug: 'revoked-name', config: { virtual_key: 'later-key' } }),
      400,
      'invalid_config',
      'config.virtual_key',
    );
  });

  it('refuses a config whose model-judged check asks its judge through what the workspace does not have', async () => {
    const base = { provider: 'openai', api_key: 'k' };
    const judge = (through: Record<string, string>) => ({ instructions: 'Is it polite?', ...through });
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { ...base, input_guardrails: [{ 'default.modelJudge': judge({ config: 'no-such-judge' }) }] },
        'config.input_guardrails[0].default.modelJudge.config',
      ],
      [
        {
          ...base,
          after_request_hooks: [
            {
              id: 'polite',
              checks: [{ id: 'modelJudge', parameters: judge({ virtual_key: 'no-such-key' }) }],
            },
          ],
        },
        'config.after_request_hooks[0].checks[0].parameters.virtual_key',
      ],
    ];
    for (const [config, param] of cases) {
      expectError(await admin.post('/configs', { slug: 'judged', config }), 400, 'invalid_config', param);
    }
    // Once the judge's config exists the same config is stored.
    expect((await admin.post('/configs', { slug: 'no-such-judge', config: base })).status).toBe(200);
    await ok(admin.post('/configs', { slug: 'judged', config: cases[0][0] }));
  });

  it('an archived config made active again is checked for what it names', async () => {
    await admin.post('/virtual-keys', { slug: 'short-lived', provider: 'openai', api_key: 'sk-short' });
    expect(
      (await admin.post('/configs', { slug: 'revived', config: { virtual_key: 'short-lived' } })).status,
    ).toBe(200);
    expect((await admin.patch('/configs/revived', { status: 'archived' })).status).toBe(200);
    expect((await admin.delete('/virtual-keys/short-lived')).status).toBe(200);
    expectError(
      await admin.patch('/configs/revived', { status: 'active' }),
      400,
      'invalid_config',
      'config.virtual_key',
    );
    expect((await admin.get('/configs/revived')).body.status).toBe('archived');
  });

  it('PATCH validates the new config and refuses an empty patch; missing configs are 404', async () => {
    await admin.post('/configs', { slug: 'patchable', config: { retry: { attempts: 2 } } });
    expectError(await admin.patch('/configs/patchable', {}), 400, 'invalid_body', null);
    expectError(
      await admin.patch('/configs/patchable', { config: { retry: { attempts: -1 } } }),
      400,
      'invalid_config',
      'config.retry.attempts',
    );
    expectError(
      await admin.patch('/configs/patchable', { config: { provider: 'nope' } }),
      400,
      'unknown_provider',
      'config.provider',
    );
    expectError(
      await admin.patch('/configs/patchable', { status: 'deleted' }),
      400,
      'invalid_body',
      'status',
    );
    expect((await admin.get('/configs/patchable')).body.version).toBe(1);
    for (const reply of [
      await admin.get('/configs/nope'),
      await admin.patch('/configs/nope', { name: 'x' }),
      await admin.get('/configs/nope/versions'),
      await admin.delete('/configs/nope'),
    ]) {
      expect(expectError(reply, 404, 'not_found', 'id').message).toContain('nope');
    }
  });

  it('a duplicate slug is 409', async () => {
    const body = { slug: 'dup-config', config: { cache: { mode: 'simple' } } };
    expect((await admin.post('/configs', body)).status).toBe(200);
    expectError(await admin.post('/configs', body), 409, 'conflict', 'slug');
  });
});
