/**
 * /v1/prompts and /v1/prompts/partials through HTTP against a real gateway, on an SQLite file and on
 * PostgreSQL: create (version 1, published), list with the name filter, get, new versions that are not
 * published, publish, versions, soft delete, redaction of an inline config's credentials, workspace roles,
 * the partials kept while a version of a prompt (any version: each may be called) needs them, and the
 * stored configs and prompts kept while a prompt version or a config target names them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { call, expectError } from '../management/http.js';
import { admin, chatTemplate, type Admin } from './support.js';

const template = chatTemplate('You are {{role}}.', '{{question}}');
const inlineConfig = { provider: 'openai', api_key: 'sk-secret-prompt-key-0001' };

function promptRoutes(start: () => Promise<TestGateway>): void {
  let gateway: TestGateway;
  let api: Admin;

  beforeAll(async () => {
    gateway = await start();
    api = admin(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('creates version 1, published; PUT makes the next version, unpublished; publish names one', async () => {
    const created = await api.post('/prompts', {
      slug: 'support-answer',
      name: 'Support answer',
      string: template,
      parameters: { model: 'gpt-4o-mini', temperature: 0.3 },
      config: inlineConfig,
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({
      object: 'prompt',
      id: expect.stringMatching(/^pmt_/),
      slug: 'support-answer',
      name: 'Support answer',
      version: 1,
      published_version: 1,
      template_type: 'chat',
      string: template,
      parameters: { model: 'gpt-4o-mini', temperature: 0.3 },
      config: { provider: 'openai', api_key: '[REDACTED]' },
    });
    const id = created.body.id as string;
    expect(created.text).not.toContain('sk-secret-prompt-key');

    for (const address of ['support-answer', id]) {
      expect((await api.get(`/prompts/${address}`)).body).toEqual(created.body);
    }

    const key = await api.post('/virtual-keys', { slug: 'main-openai', provider: 'openai', api_key: 'sk-m' });
    expect(key.status, key.text).toBe(200);
    const next = await api.put(`/prompts/${id}`, {
      slug: 'support-answer',
      string: chatTemplate('You are {{role}}, briefly.', '{{question}}'),
      parameters: { model: 'gpt-4o' },
      virtual_key: 'main-openai',
    });
    expect(next.status, next.text).toBe(200);
    expect(next.body).toMatchObject({ version: 2, published_version: 1, virtual_key: 'main-openai' });
    expect(next.body.config).toBeUndefined();

    const versions = await api.get('/prompts/support-answer/versions');
    expect(versions.body.data.map((v: { version: number }) => v.version)).toEqual([1, 2]);
    expect(versions.body.data[0]).toMatchObject({ object: 'prompt.version', prompt_id: id, version: 1 });
    expect(versions.text).not.toContain('sk-secret-prompt-key');
    expect((await api.get('/prompts/support-answer/versions/2')).body).toMatchObject({
      version: 2,
      parameters: { model: 'gpt-4o' },
    });
    expectError(await api.get('/prompts/support-answer/versions/3'), 404, 'prompt_not_found', 'version');

    expect((await api.put('/prompts/support-answer/publish', { version: 2 })).body).toMatchObject({
      version: 2,
      published_version: 2,
    });
    expectError(
      await api.put('/prompts/support-answer/publish', { version: 7 }),
      404,
      'not_found',
      'version',
    );
    expect((await api.get('/prompts/support-answer')).body.published_version).toBe(2);
  });

  it('lists prompts, filtered by name', async () => {
    await api.post('/prompts', { slug: 'billing-faq', name: 'Billing FAQ', string: template });
    const all = await api.get('/prompts');
    expect(all.body.object).toBe('list');
    expect(all.body.data.map((p: { slug: string }) => p.slug)).toEqual(
      expect.arrayContaining(['support-answer', 'billing-faq']),
    );
    const filtered = await api.get('/prompts?name=billing');
    expect(filtered.body.data.map((p: { slug: string }) => p.slug)).toEqual(['billing-faq']);
    expectError(await api.get('/prompts?name=billing&name=support'), 400, 'invalid_query', 'name');
  });

  it('refuses what it cannot store, naming the field, and stores nothing', async () => {
    expectError(
      await api.post('/prompts', { slug: 'two-ways', string: template, virtual_key: 'a', config: 'b' }),
      400,
      'invalid_body',
      'config',
    );
    expectError(
      await api.post('/prompts', { slug: 'no-config', string: template, config: 'missing-config' }),
      404,
      'config_not_found',
      'config',
    );
    expectError(
      await api.post('/prompts', { slug: 'bad-config', string: template, config: { retry: { attemps: 1 } } }),
      400,
      'invalid_config',
    );
    expectError(
      await api.post('/prompts', { slug: 'partials', string: template }),
      400,
      'invalid_body',
      'slug',
    );
    expectError(
      await api.post('/prompts', { slug: 'support-answer', string: template }),
      409,
      'conflict',
      'slug',
    );
    expectError(
      await api.put('/prompts/billing-faq', { slug: 'renamed', string: template }),
      400,
      'invalid_body',
      'slug',
    );
    for (const slug of ['two-ways', 'no-config', 'bad-config']) {
      expectError(await api.get(`/prompts/${slug}`), 404, 'prompt_not_found');
    }
  });

  it('stores a version naming no destination whose model only reads like a catalog model (@cf/…)', async () => {
    // Workers AI's model names start with @cf/; such a version is called with the caller's own virtual key or
    // config, which come before the model's slug, so a workspace with no provider "cf" stores it.
    const stored = await api.post('/prompts', {
      slug: 'workers-ai-model',
      string: template,
      parameters: { model: '@cf/meta/llama-3.1-8b-instruct' },
    });
    expect(stored.status, stored.text).toBe(200);
  });

  it('refuses a version naming a virtual key, catalog provider or stored guardrail the workspace does not have', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ virtual_key: 'no-such-key' }, 'virtual_key'],
      [{ provider: '@no-such-provider' }, 'provider'],
      [
        { config: { ...inlineConfig, input_guardrails: ['no-such-guardrail'] } },
        'config.input_guardrails[0]',
      ],
      [
        {
          config: { strategy: { mode: 'fallback' }, targets: [inlineConfig, { virtual_key: 'no-such-key' }] },
        },
        'config.targets[1].virtual_key',
      ],
      [{ config: { ...inlineConfig, prompt_id: 'no-such-prompt' } }, 'config.prompt_id'],
    ];
    for (const [destination, param] of cases) {
      const body = { string: template, ...destination };
      expectError(await api.post('/prompts', { slug: 'ghost-named', ...body }), 400, 'invalid_config', param);
      expectError(await api.put('/prompts/billing-faq', body), 400, 'invalid_config', param);
    }
    expectError(await api.get('/prompts/ghost-named'), 404, 'prompt_not_found');
    expect((await api.get('/prompts/billing-faq/versions')).body.data).toHaveLength(
      (await api.get('/prompts/billing-faq')).body.version,
    );

    const key = await api.post('/virtual-keys', { slug: 'named-later', provider: 'openai', api_key: 'sk-l' });
    expect(key.status, key.text).toBe(200);
    const stored = await api.post('/prompts', {
      slug: 'ghost-named',
      string: template,
      config: { strategy: { mode: 'fallback' }, targets: [inlineConfig, { virtual_key: 'named-later' }] },
    });
    expect(stored.status, stored.text).toBe(200);
    expect((await api.delete('/prompts/ghost-named')).status).toBe(200);
    expect((await api.delete('/virtual-keys/named-later')).status).toBe(200);
  });

  it('deletes softly: gone from every read, its slug free again', async () => {
    const created = await api.post('/prompts', { slug: 'short-lived', string: template });
    const deleted = await api.delete('/prompts/short-lived');
    expect(deleted.body).toEqual({ object: 'prompt.deleted', id: created.body.id, deleted: true });
    expectError(await api.get('/prompts/short-lived'), 404, 'prompt_not_found');
    expectError(await api.delete('/prompts/short-lived'), 404, 'prompt_not_found');
    expect((await api.post('/prompts', { slug: 'short-lived', string: template })).body.version).toBe(1);
  });

  it('keeps partials with versions of their own', async () => {
    const created = await api.post('/prompts/partials', { slug: 'house-style', string: 'Plain words.' });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({
      object: 'prompt.partial',
      id: expect.stringMatching(/^ptl_/),
      slug: 'house-style',
      version: 1,
      published_version: 1,
      string: 'Plain words.',
    });
    const next = await api.put('/prompts/partials/house-style', { string: 'Plainer words.' });
    expect(next.body).toMatchObject({ version: 2, published_version: 1, string: 'Plainer words.' });
    expect(
      (await api.put('/prompts/partials/house-style/publish', { version: 2 })).body.published_version,
    ).toBe(2);
    const versions = await api.get('/prompts/partials/house-style/versions');
    expect(versions.body.data.map((v: { string: string }) => v.string)).toEqual([
      'Plain words.',
      'Plainer words.',
    ]);
    expect((await api.get('/prompts/partials/house-style/versions/1')).body.string).toBe('Plain words.');
    expect((await api.get('/prompts/partials')).body.data.map((p: { slug: string }) => p.slug)).toContain(
      'house-style',
    );
    expectError(
      await api.post('/prompts/partials', { slug: 'raw', string: '{{{x}}}' }),
      400,
      'invalid_prompt',
    );
    expect((await api.delete('/prompts/partials/house-style')).body.deleted).toBe(true);
    expectError(await api.get('/prompts/partials/house-style'), 404, 'not_found');
  });

  it('keeps a partial that a version other than the published or latest includes, unless forced', async () => {
    expect((await api.post('/prompts/partials', { slug: 'signature', string: 'Regards.' })).status).toBe(200);
    await api.post('/prompts', { slug: 'letter', string: chatTemplate('{{>signature}}', '{{q}}') });
    // Version 2 no longer includes it and is published; version 1 is still called as letter@1.
    expect((await api.put('/prompts/letter', { string: chatTemplate('Plain.', '{{q}}') })).status).toBe(200);
    expect((await api.put('/prompts/letter/publish', { version: 2 })).status).toBe(200);

    expect((await api.put('/prompts/partials/signature', { string: 'Say "bye".' })).body.version).toBe(2);
    const publish = expectError(
      await api.put('/prompts/partials/signature/publish', { version: 2 }),
      409,
      'conflict',
      'version',
    );
    expect(publish.message).toContain('"letter" (version 1)');
    expect(publish.message).toContain('letter@1: ');
    const remove = expectError(await api.delete('/prompts/partials/signature'), 409, 'conflict', 'id');
    expect(remove.message).toContain('"letter" (version 1)');

    const variables = { variables: { q: 'x' }, model: 'gpt-4o-mini' };
    expect((await api.post('/prompts/letter@1/render', variables)).status).toBe(200);
    const forced = await api.put('/prompts/partials/signature/publish?force=true', { version: 2 });
    expect(forced.status, forced.text).toBe(200);
    expectError(await api.post('/prompts/letter@1/render', variables), 400, 'invalid_prompt');
    // Nothing that works now would fail: a version failing already does not hold the partial.
    expect((await api.delete('/prompts/partials/signature')).status).toBe(200);
    expect((await api.post('/prompts/letter/render', variables)).status).toBe(200);
  });

  it('finds the versions that include a partial through partials, in any of their versions', async () => {
    expect((await api.post('/prompts/partials', { slug: 'tone', string: 'Be kind.' })).status).toBe(200);
    expect((await api.post('/prompts/partials', { slug: 'style', string: '{{>tone}}' })).status).toBe(200);
    // The published version of style no longer includes tone; its version 1 does, and a prompt pins it.
    expect((await api.put('/prompts/partials/style', { string: 'Be brief.' })).status).toBe(200);
    expect((await api.put('/prompts/partials/style/publish', { version: 2 })).status).toBe(200);
    await api.post('/prompts', { slug: 'pinned-style', string: chatTemplate('{{>style@1}}', '{{q}}') });
    await api.post('/prompts', { slug: 'styled', string: chatTemplate('{{>style}}', '{{q}}') });

    const remove = expectError(await api.delete('/prompts/partials/tone'), 409, 'conflict', 'id');
    expect(remove.message).toContain('"pinned-style" (version 1)');
    expect(remove.message).not.toContain('"styled"');
  });

  it('finds versions stored without a record of the partials they include', async () => {
    const store = gateway.server.deps.store;
    const workspace = gateway.server.bootstrap.workspace;
    expect((await api.post('/prompts/partials', { slug: 'legacy-footer', string: 'Bye.' })).status).toBe(200);
    // As stored before the gateway kept that record, or by a node that does not.
    const wrapper = await store.createPromptPartial({
      organisation_id: workspace.organisation_id,
      workspace_id: workspace.id,
      slug: 'legacy-wrapper',
      name: 'legacy-wrapper',
      partial: { string: 'Note: {{>legacy-footer}}' },
    });
    await store.createPrompt({
      organisation_id: workspace.organisation_id,
      workspace_id: workspace.id,
      slug: 'legacy',
      name: 'legacy',
      prompt: {
        template_type: 'chat',
        string: chatTemplate(`{{>${wrapper.id}}}`, '{{q}}'),
        parameters: {},
      },
    });

    const remove = expectError(await api.delete('/prompts/partials/legacy-footer'), 409, 'conflict', 'id');
    expect(remove.message).toContain('"legacy" (version 1)');
    expect(await store.listUnindexedPromptVersions(workspace.id)).toEqual([]);
    expect(await store.listUnindexedPromptPartialVersions(workspace.id)).toEqual([]);
    const including = await store.listPromptVersionsIncluding(workspace.id, [wrapper.id]);
    expect(including.map((version) => [version.slug, version.version])).toEqual([['legacy', 1]]);
  });

  it('keeps a stored config that versions of prompts send their calls to, unless forced', async () => {
    const stored = await api.post('/configs', { slug: 'route-a', config: inlineConfig });
    expect(stored.status, stored.text).toBe(200);
    const id = stored.body.id as string;
    // Version 1 names it by slug, version 3 by id; version 2 (published) goes elsewhere.
    await api.post('/prompts', { slug: 'routed', string: template, config: 'route-a' });
    await api.put('/prompts/routed', { string: template, provider: 'openai' });
    await api.put('/prompts/routed', { string: template, config: id });
    expect((await api.put('/prompts/routed/publish', { version: 2 })).status).toBe(200);
    await api.post('/prompts', { slug: 'elsewhere', string: template, config: inlineConfig });

    for (const address of ['route-a', id]) {
      const refused = expectError(await api.delete(`/configs/${address}`), 409, 'conflict', 'id');
      expect(refused.message).toContain('config "route-a"');
      expect(refused.message).toContain('"routed" (versions 1, 3)');
      expect(refused.message).not.toContain('elsewhere');
      expect(refused.message).toContain('?force=true');
    }
    expect((await api.get('/configs/route-a')).status).toBe(200);
    expectError(await api.delete('/configs/route-a?force=maybe'), 400, 'invalid_query', 'force');

    const forced = await api.delete('/configs/route-a?force=true');
    expect(forced.status, forced.text).toBe(200);
    expect(forced.body).toMatchObject({ id, deleted: true });
    // A config no prompt names is deleted as before.
    expect((await api.post('/configs', { slug: 'unused-route', config: inlineConfig })).status).toBe(200);
    expect((await api.delete('/configs/unused-route')).status).toBe(200);
  });

  it('keeps a stored config that versions of prompts send their calls to active, unless forced', async () => {
    const patch = (path: string, body: unknown) => call(gateway.url, gateway.adminKey, 'PATCH', path, body);
    const stored = await api.post('/configs', { slug: 'route-b', config: inlineConfig });
    expect(stored.status, stored.text).toBe(200);
    await api.post('/prompts', { slug: 'routed-b', string: template, config: 'route-b' });

    // Archived, its calls would fail as a deleted config's do: refused alike, naming the field.
    const refused = expectError(
      await patch('/configs/route-b', { status: 'archived' }),
      409,
      'conflict',
      'status',
    );
    expect(refused.message).toContain('Archiving the config "route-b"');
    expect(refused.message).toContain('"routed-b" (version 1)');
    expect(refused.message).toContain('?force=true to archive it anyway');
    // Nothing of a refused change is stored, a new config included.
    const other = { provider: 'openai', api_key: 'sk-other-key-0002' };
    expectError(await patch('/configs/route-b', { status: 'archived', config: other }), 409, 'conflict');
    expect((await api.get('/configs/route-b')).body).toMatchObject({ status: 'active', version: 1 });
    // Renaming it, or changing its config, is no removal.
    expect((await patch('/configs/route-b', { name: 'Route B', config: other })).status).toBe(200);

    const forced = await patch('/configs/route-b?force=true', { status: 'archived' });
    expect(forced.status, forced.text).toBe(200);
    expect(forced.body).toMatchObject({ status: 'archived' });
    // Its calls would fail at once: no version sends them to it.
    expectError(
      await api.post('/prompts', { slug: 'routed-c', string: template, config: 'route-b' }),
      404,
      'config_not_found',
      'config',
    );
    expectError(
      await api.put('/prompts/routed-b', { string: template, config: stored.body.id }),
      404,
      'config_not_found',
      'config',
    );
    expect((await api.get('/prompts/routed-b')).body).toMatchObject({ version: 1 });
    // Archived already: archiving it again, or deleting it, breaks nothing more.
    expect((await patch('/configs/route-b', { status: 'archived' })).status).toBe(200);
    expect((await patch('/configs/route-b', { status: 'active' })).status).toBe(200);
    expect((await api.delete('/configs/route-b?force=true')).status).toBe(200);
  });

  it('keeps a prompt that targets of active configs name by prompt_id, unless forced', async () => {
    const prompt = await api.post('/prompts', { slug: 'fallback-answer', string: template });
    expect(prompt.status, prompt.text).toBe(200);
    const id = prompt.body.id as string;
    const fallback = {
      strategy: { mode: 'fallback' },
      targets: [{ provider: 'openai', api_key: 'sk-a' }, { prompt_id: 'fallback-answer@1' }],
    };
    const nested = {
      strategy: { mode: 'loadbalance' },
      targets: [{ targets: [{ prompt_id: id }], strategy: { mode: 'fallback' } }],
    };
    for (const [slug, config] of [
      ['uses-slug', fallback],
      ['uses-id', nested],
      ['archived-use', fallback],
    ] as const) {
      const created = await api.post('/configs', { slug, config });
      expect(created.status, created.text).toBe(200);
    }
    // An archived config's calls fail already: deleting the prompt does not break it.
    const archived = await call(gateway.url, gateway.adminKey, 'PATCH', '/configs/archived-use', {
      status: 'archived',
    });
    expect(archived.status, archived.text).toBe(200);

    for (const address of ['fallback-answer', id]) {
      const refused = expectError(await api.delete(`/prompts/${address}`), 409, 'conflict', 'id');
      expect(refused.message).toContain('prompt "fallback-answer"');
      expect(refused.message).toContain('"uses-slug" (config.targets[1].prompt_id)');
      expect(refused.message).toContain('"uses-id" (config.targets[0].targets[0].prompt_id)');
      expect(refused.message).not.toContain('archived-use');
    }
    expect((await api.get('/prompts/fallback-answer')).status).toBe(200);

    expect((await api.delete('/prompts/fallback-answer?force=true')).status).toBe(200);
    expectError(await api.get('/prompts/fallback-answer'), 404, 'prompt_not_found');
  });

  it('keeps a virtual key or catalog provider that configs or prompts name, unless forced', async () => {
    for (const { path, field, value } of [
      { path: '/virtual-keys', field: 'virtual_key', value: (slug: string) => slug },
      { path: '/providers', field: 'provider', value: (slug: string) => `@${slug}` },
    ]) {
      const slug = `named-${field.replace('_', '-')}`;
      const credential = await api.post(path, { slug, provider: 'openai', api_key: 'sk-named-credential' });
      expect(credential.status, credential.text).toBe(200);
      const id = credential.body.id as string;
      const config = await api.post('/configs', {
        slug: `through-${slug}`,
        config: { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai' }, { [field]: value(id) }] },
      });
      expect(config.status, config.text).toBe(200);
      // Version 1 names it as its destination, version 2 inside its inline config.
      await api.post('/prompts', { slug: `sent-${slug}`, string: template, [field]: value(slug) });
      await api.put(`/prompts/sent-${slug}`, { string: template, config: { [field]: value(slug) } });
      await api.put(`/prompts/sent-${slug}`, { string: template, provider: 'openai' });

      const refused = expectError(await api.delete(`${path}/${slug}`), 409, 'conflict', 'slug');
      expect(refused.message).toContain(`configs "through-${slug}" (config.targets[1].${field})`);
      expect(refused.message).toContain(`prompts "sent-${slug}" (versions 1, 2)`);
      expect((await api.get(`${path}/${slug}`)).status).toBe(200);
      expect((await api.delete(`${path}/${slug}?force=true`)).status).toBe(200);
    }
  });

  it('keeps a virtual key or config that a semantic cache embeds through or a model-judged check judges through, unless forced', async () => {
    const patch = (path: string, body: unknown) => call(gateway.url, gateway.adminKey, 'PATCH', path, body);
    const key = await api.post('/virtual-keys', { slug: 'embedder', provider: 'openai', api_key: 'sk-emb' });
    expect(key.status, key.text).toBe(200);
    expect((await api.post('/configs', { slug: 'judge-route', config: inlineConfig })).status).toBe(200);
    const judge = (through: Record<string, string>) => ({ instructions: 'Is it polite?', ...through });
    for (const [slug, config] of [
      [
        'cached-route',
        {
          ...inlineConfig,
          cache: {
            mode: 'semantic',
            embedding: { virtual_key: 'embedder', model: 'text-embedding-3-small' },
          },
        },
      ],
      [
        'embedding-route',
        {
          strategy: { mode: 'fallback' },
          targets: [
            inlineConfig,
            {
              ...inlineConfig,
              cache: { mode: 'semantic', embedding: { config: 'judge-route', model: 'e' } },
            },
          ],
        },
      ],
      [
        'judged-route',
        { ...inlineConfig, input_guardrails: [{ 'default.modelJudge': judge({ config: 'judge-route' }) }] },
      ],
    ] as const) {
      const stored = await api.post('/configs', { slug, config });
      expect(stored.status, stored.text).toBe(200);
    }
    const hooked = {
      ...inlineConfig,
      after_request_hooks: [
        { id: 'polite', checks: [{ id: 'modelJudge', parameters: judge({ virtual_key: key.body.id }) }] },
      ],
    };
    const prompt = await api.post('/prompts', { slug: 'judged-prompt', string: template, config: hooked });
    expect(prompt.status, prompt.text).toBe(200);

    const keyRefused = expectError(await api.delete('/virtual-keys/embedder'), 409, 'conflict', 'slug');
    expect(keyRefused.message).toContain('configs "cached-route" (config.cache.embedding.virtual_key)');
    expect(keyRefused.message).toContain('prompts "judged-prompt" (version 1)');
    for (const [refused, param] of [
      [await api.delete('/configs/judge-route'), 'id'],
      [await patch('/configs/judge-route', { status: 'archived' }), 'status'],
    ] as const) {
      const error = expectError(refused, 409, 'conflict', param);
      expect(error.message).toContain(
        'configs "embedding-route" (config.targets[1].cache.embedding.config), ' +
          '"judged-route" (config.input_guardrails[0].default.modelJudge.config)',
      );
      expect(error.message).not.toContain('cached-route');
    }
    expect((await api.get('/configs/judge-route')).body).toMatchObject({ status: 'active' });
    expect((await api.get('/virtual-keys/embedder')).status).toBe(200);

    expect((await api.delete('/configs/judge-route?force=true')).status).toBe(200);
    expect((await api.delete('/virtual-keys/embedder?force=true')).status).toBe(200);
    for (const slug of ['cached-route', 'embedding-route', 'judged-route']) {
      expect((await api.delete(`/configs/${slug}`)).status).toBe(200);
    }
    expect((await api.delete('/prompts/judged-prompt')).status).toBe(200);
  });

  it('keeps a virtual key or config that a stored guardrail judges through, unless forced', async () => {
    const patch = (path: string, body: unknown) => call(gateway.url, gateway.adminKey, 'PATCH', path, body);
    const key = await api.post('/virtual-keys', { slug: 'guard-judge', provider: 'openai', api_key: 'sk-g' });
    expect(key.status, key.text).toBe(200);
    expect((await api.post('/configs', { slug: 'guard-route', config: inlineConfig })).status).toBe(200);
    const judge = (through: Record<string, string>) => ({
      'default.modelJudge': { instructions: 'Is it polite?', ...through },
    });
    // What a judge asks through is checked when the guardrail is stored, as a config's is.
    for (const [guardrail, param] of [
      [judge({ config: 'no-such-route' }), 'guardrail.default.modelJudge.config'],
      [judge({ virtual_key: 'no-such-key' }), 'guardrail.default.modelJudge.virtual_key'],
    ] as const) {
      const refused = await api.post('/guardrails', { slug: 'judged-nowhere', guardrail });
      expectError(refused, 400, 'invalid_config', param);
    }
    expectError(await api.get('/guardrails/judged-nowhere'), 404, 'not_found');
    for (const [slug, guardrail] of [
      ['judged-by-key', judge({ virtual_key: 'guard-judge' })],
      ['judged-by-config', { deny: true, ...judge({ config: 'guard-route' }) }],
    ] as const) {
      const stored = await api.post('/guardrails', { slug, guardrail });
      expect(stored.status, stored.text).toBe(200);
    }
    expectError(
      await patch('/guardrails/judged-by-key', { guardrail: judge({ virtual_key: 'no-such-key' }) }),
      400,
      'invalid_config',
      'guardrail.default.modelJudge.virtual_key',
    );
    expect((await api.get('/guardrails/judged-by-key')).body).toMatchObject({ version: 1 });

    const keyRefused = expectError(await api.delete('/virtual-keys/guard-judge'), 409, 'conflict', 'slug');
    expect(keyRefused.message).toContain(
      'guardrails "judged-by-key" (guardrail.default.modelJudge.virtual_key)',
    );
    expect(keyRefused.message).not.toContain('judged-by-config');
    for (const [refused, param] of [
      [await api.delete(`/configs/guard-route`), 'id'],
      [await patch('/configs/guard-route', { status: 'archived' }), 'status'],
    ] as const) {
      const error = expectError(refused, 409, 'conflict', param);
      expect(error.message).toContain('guardrails "judged-by-config" (guardrail.default.modelJudge.config)');
    }
    expect((await api.get('/configs/guard-route')).body).toMatchObject({ status: 'active' });

    // Once no guardrail judges through the config, it goes as any other.
    expect((await api.delete('/guardrails/judged-by-config')).status).toBe(200);
    expect((await api.delete('/configs/guard-route')).status).toBe(200);
    expect((await api.delete('/virtual-keys/guard-judge?force=true')).status).toBe(200);
    expect((await api.delete('/guardrails/judged-by-key')).status).toBe(200);
  });

  it("finds what names a deleted thing through the store's record of each version, kept as they are stored", async () => {
    const store = gateway.server.deps.store;
    const workspace = gateway.server.bootstrap.workspace;
    const key = await api.post('/virtual-keys', {
      slug: 'recorded-key',
      provider: 'openai',
      api_key: 'sk-rec',
    });
    expect(key.status, key.text).toBe(200);
    expect(
      (await api.post('/virtual-keys', { slug: 'other-key', provider: 'openai', api_key: 'sk-o' })).status,
    ).toBe(200);
    expect((await api.post('/prompts', { slug: 'x', string: template })).status).toBe(200);
    expect((await api.put('/prompts/x', { string: template })).status).toBe(200);
    const both = {
      strategy: { mode: 'fallback' },
      targets: [{ virtual_key: 'recorded-key' }, { prompt_id: 'x@2' }],
    };
    expect((await api.post('/configs', { slug: 'recorded-config', config: both })).status).toBe(200);
    expect(
      (await api.post('/prompts', { slug: 'recorded-prompt', string: template, config: 'recorded-config' }))
        .status,
    ).toBe(200);
    // Written with their versions: nothing is left to record, and each is found by what it names.
    expect(await store.listConfigVersionsWithoutReferences(workspace.id)).toEqual([]);
    expect(await store.listPromptVersionsWithoutReferences(workspace.id)).toEqual([]);
    const configs = await store.listConfigsReferencing(workspace.id, [
      'virtual_key:recorded-key',
      'prompt:x',
    ]);
    expect(configs.map((config) => config.slug)).toEqual(['recorded-config']);
    const prompts = await store.listPromptVersionsReferencing(workspace.id, ['config:recorded-config']);
    expect(prompts.map((version) => [version.slug, version.version])).toEqual([['recorded-prompt', 1]]);

    // A config counts by its current version: one that named the key before no longer does.
    const patch = (path: string, body: unknown) => call(gateway.url, gateway.adminKey, 'PATCH', path, body);
    expect((await patch('/configs/recorded-config', { config: { virtual_key: 'other-key' } })).status).toBe(
      200,
    );
    expect(await store.listConfigsReferencing(workspace.id, ['virtual_key:recorded-key'])).toEqual([]);
    expect((await api.delete('/prompts/recorded-prompt?force=true')).status).toBe(200);
    expect((await api.delete('/virtual-keys/recorded-key')).status).toBe(200);
    expect((await api.delete('/configs/recorded-config')).status).toBe(200);
    expect((await api.delete('/prompts/x')).status).toBe(200);
  });

  it('finds configs and prompt versions stored without a record of what they name', async () => {
    const store = gateway.server.deps.store;
    const workspace = gateway.server.bootstrap.workspace;
    const key = await api.post('/virtual-keys', {
      slug: 'legacy-key',
      provider: 'openai',
      api_key: 'sk-legacy',
    });
    expect(key.status, key.text).toBe(200);
    // As stored before the gateway kept that record, or by a node that does not.
    const owner = { organisation_id: workspace.organisation_id, workspace_id: workspace.id };
    await store.createConfig({
      ...owner,
      slug: 'legacy-route',
      name: 'legacy-route',
      config: { targets: [{ provider: 'openai' }, { virtual_key: 'legacy-key' }] },
    });
    await store.createConfig({
      ...owner,
      slug: 'legacy-cache',
      name: 'legacy-cache',
      config: {
        provider: 'openai',
        cache: { mode: 'semantic', embedding: { virtual_key: 'legacy-key', model: 'e' } },
      },
    });
    await store.createPrompt({
      ...owner,
      slug: 'legacy-sender',
      name: 'legacy-sender',
      prompt: { template_type: 'chat', string: template, parameters: {}, virtual_key: key.body.id as string },
    });

    const refused = expectError(await api.delete('/virtual-keys/legacy-key'), 409, 'conflict', 'slug');
    // Both configs, in the order of their ids (random within a millisecond, and both were made in one).
    const named = /configs (.*?); prompts/.exec(refused.message)?.[1]?.split(', ').sort();
    expect(named).toEqual([
      '"legacy-cache" (config.cache.embedding.virtual_key)',
      '"legacy-route" (config.targets[1].virtual_key)',
    ]);
    expect(refused.message).toContain('prompts "legacy-sender" (version 1)');
    expect(await store.listConfigVersionsWithoutReferences(workspace.id)).toEqual([]);
    expect(await store.listPromptVersionsWithoutReferences(workspace.id)).toEqual([]);
    const found = await store.listPromptVersionsReferencing(workspace.id, [`virtual_key:${key.body.id}`]);
    expect(found.map((version) => [version.slug, version.version])).toEqual([['legacy-sender', 1]]);
    expect((await api.delete('/virtual-keys/legacy-key?force=true')).status).toBe(200);
  });

  it("keeps the previous version's credential where a new version sends it back as shown ([REDACTED])", async () => {
    const secret = 'sk-secret-prompt-key-kept';
    const created = await api.post('/prompts', {
      slug: 'redacted-kept',
      string: template,
      parameters: { model: 'gpt-4o-mini' },
      config: { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: secret }] },
    });
    expect(created.status, created.text).toBe(200);
    const { id, workspace_id: workspaceId } = created.body as { id: string; workspace_id: string };
    const shown = (await api.get('/prompts/redacted-kept')).body as Record<string, unknown>;
    expect(shown.config).toEqual({
      strategy: { mode: 'fallback' },
      targets: [{ provider: 'openai', api_key: '[REDACTED]' }],
    });
    const { store } = gateway.server.deps;
    const storedKey = async (version: number) =>
      (
        (await store.getPromptVersion(workspaceId, id, version))?.prompt.config as {
          targets: Array<{ api_key: unknown }>;
        }
      ).targets[0].api_key;

    // Sent back as read, with another parameter: the new version keeps the key.
    const next = await api.put('/prompts/redacted-kept', {
      string: shown.string,
      parameters: { model: 'gpt-4o' },
      config: shown.config,
    });
    expect(next.status, next.text).toBe(200);
    expect(next.body).toMatchObject({ version: 2, config: shown.config });
    expect(await storedKey(2)).toBe(secret);

    // Not to another provider, nor where the previous version had none: refused, naming it, nothing stored.
    expectError(
      await api.put('/prompts/redacted-kept', {
        string: template,
        config: { targets: [{ provider: 'anthropic', api_key: '[REDACTED]' }] },
      }),
      400,
      'invalid_body',
      'config.targets[0].api_key',
    );
    expectError(
      await api.put('/prompts/redacted-kept', {
        string: template,
        config: {
          strategy: { mode: 'fallback' },
          targets: [
            { provider: 'openai', api_key: '[REDACTED]' },
            { provider: 'openai', api_key: '[REDACTED]' },
          ],
        },
      }),
      400,
      'invalid_body',
      // A target added: the destinations changed, so the first [REDACTED] is refused.
      'config.targets[0].api_key',
    );
    expect((await api.get('/prompts/redacted-kept')).body.version).toBe(2);
    expectError(
      await api.post('/prompts', {
        slug: 'redacted-new',
        string: template,
        config: { provider: 'openai', api_key: '[REDACTED]' },
      }),
      400,
      'invalid_body',
      'config.api_key',
    );
    expectError(await api.get('/prompts/redacted-new'), 404, 'prompt_not_found');
  });

  it("refuses a [REDACTED] key that a target below, taking its parent's key, would send to a new host", async () => {
    const secret = 'sk-REAL-SECRET-inherited';
    const config = {
      provider: 'openai',
      api_key: secret,
      strategy: { mode: 'fallback' },
      targets: [{ retry: { attempts: 1 } }],
    };
    const created = await api.post('/prompts', { slug: 'redacted-inherited', string: template, config });
    expect(created.status, created.text).toBe(200);
    const { id, workspace_id: workspaceId } = created.body as { id: string; workspace_id: string };
    const shown = (await api.get('/prompts/redacted-inherited')).body as { config: Record<string, unknown> };
    expect(shown.config.api_key).toBe('[REDACTED]');

    const refused = expectError(
      await api.put('/prompts/redacted-inherited', {
        string: template,
        config: {
          ...shown.config,
          targets: [{ retry: { attempts: 1 }, custom_host: 'https://evil.example/v1' }],
        },
      }),
      400,
      'invalid_body',
      'config.api_key',
    );
    expect(refused.message).not.toContain(secret);
    expect((await api.get('/prompts/redacted-inherited')).body.version).toBe(1);

    // The target's other settings changed, not where it sends the key: kept.
    const next = await api.put('/prompts/redacted-inherited', {
      string: template,
      config: { ...shown.config, targets: [{ retry: { attempts: 2 } }] },
    });
    expect(next.status, next.text).toBe(200);
    const stored = await gateway.server.deps.store.getPromptVersion(workspaceId, id, 2);
    expect(stored?.prompt.config).toEqual({ ...config, targets: [{ retry: { attempts: 2 } }] });
  });

  it("refuses a [REDACTED] key once a target below drops its own key (it would take its parent's)", async () => {
    const config = {
      provider: 'openai',
      api_key: 'sk-root-secret-prompt',
      custom_host: 'https://home.example/v1',
      strategy: { mode: 'fallback' },
      targets: [{ custom_host: 'https://evil.example/v1', request_timeout: 10000, api_key: 'sk-own' }],
    };
    const created = await api.post('/prompts', { slug: 'redacted-dropped', string: template, config });
    expect(created.status, created.text).toBe(200);
    const shown = (await api.get('/prompts/redacted-dropped')).body as { config: Record<string, unknown> };
    const refused = expectError(
      await api.put('/prompts/redacted-dropped', {
        string: template,
        config: {
          ...shown.config,
          targets: [{ custom_host: 'https://evil.example/v1', request_timeout: 10000 }],
        },
      }),
      400,
      'invalid_body',
      'config.api_key',
    );
    expect(refused.message).not.toContain('sk-root-secret-prompt');
    expect((await api.get('/prompts/redacted-dropped')).body.version).toBe(1);
  });

  it("refuses a [REDACTED] secret outside the config once the config (its slug, or an inline one's addresses) changes", async () => {
    const parameters = {
      model: 'gpt-4o-mini',
      user_api_key: 'user-secret-parameter',
      extra_headers: { authorization: 'Bearer header-secret' },
    };
    const config = {
      provider: 'openai',
      api_key: 'sk-config-secret',
      custom_host: 'https://api.openai.example/v1',
    };
    const created = await api.post('/prompts', {
      slug: 'redacted-outside',
      string: template,
      parameters,
      config,
    });
    expect(created.status, created.text).toBe(200);
    const { id, workspace_id: workspaceId } = created.body as { id: string; workspace_id: string };
    const shown = (await api.get('/prompts/redacted-outside')).body as {
      parameters: Record<string, unknown>;
      config: Record<string, unknown>;
    };
    expect(shown.parameters).toEqual({
      model: 'gpt-4o-mini',
      user_api_key: '[REDACTED]',
      extra_headers: { authorization: '[REDACTED]' },
    });
    const elsewhere = await api.post('/configs', {
      slug: 'evil-config-slug',
      config: { provider: 'openai', api_key: 'sk-theirs', custom_host: 'https://evil.example/v1' },
    });
    expect(elsewhere.status, elsewhere.text).toBe(200);

    const refusals: Array<[Record<string, unknown>, string]> = [
      // Sent under another stored config.
      [{ parameters: shown.parameters, config: 'evil-config-slug' }, 'parameters.user_api_key'],
      [
        { parameters: { ...shown.parameters, user_api_key: 'sk-new' }, config: 'evil-config-slug' },
        'parameters.extra_headers.authorization',
      ],
      // Under an inline config sending calls to another host (with a key of its own).
      [
        {
          parameters: shown.parameters,
          config: { provider: 'openai', api_key: 'sk-theirs', custom_host: 'https://evil.example/v1' },
        },
        'parameters.user_api_key',
      ],
      // Under an inline config whose target, taking its key, goes to another host.
      [
        {
          parameters: shown.parameters,
          config: {
            ...config,
            strategy: { mode: 'fallback' },
            targets: [{ custom_host: 'https://evil.example/v1' }],
          },
        },
        'parameters.user_api_key',
      ],
      // With no config at all: calls go wherever the caller says.
      [{ parameters: shown.parameters }, 'parameters.user_api_key'],
    ];
    for (const [body, param] of refusals) {
      const refused = expectError(
        await api.put('/prompts/redacted-outside', { string: template, ...body }),
        400,
        'invalid_body',
        param,
      );
      expect(refused.message).not.toMatch(/user-secret-parameter|header-secret/);
    }
    expect((await api.get('/prompts/redacted-outside')).body.version).toBe(1);

    // The config's other settings changed, not where it sends calls: the secrets are kept.
    const next = await api.put('/prompts/redacted-outside', {
      string: template,
      parameters: { ...shown.parameters, model: 'gpt-4o' },
      config: { ...shown.config, retry: { attempts: 2 } },
    });
    expect(next.status, next.text).toBe(200);
    const stored = await gateway.server.deps.store.getPromptVersion(workspaceId, id, 2);
    expect(stored?.prompt).toMatchObject({
      parameters: { ...parameters, model: 'gpt-4o' },
      config: { ...config, retry: { attempts: 2 } },
    });
    expect((await api.delete('/prompts/redacted-outside')).status).toBe(200);
    expect((await api.delete('/configs/evil-config-slug')).status).toBe(200);
  });

  it('management needs an admin key; completions take a member key', async () => {
    const member = await api.post('/api-keys', { name: 'member', role: 'member' });
    const key = member.body.key as string;
    expectError(await call(gateway.url, key, 'GET', '/prompts'), 403, 'forbidden');
    expectError(
      await call(gateway.url, key, 'POST', '/prompts', { slug: 'x', string: template }),
      403,
      'forbidden',
    );
    const rendered = await call(gateway.url, key, 'POST', '/prompts/billing-faq/render', {
      variables: { role: 'r', question: 'q' },
      model: 'gpt-4o-mini',
    });
    expect(rendered.status, rendered.text).toBe(200);
  });
}

describe('/v1/prompts on SQLite', () => {
  promptRoutes(() => startGateway());
});

describeWithPostgres('/v1/prompts on PostgreSQL', () => {
  const schema = freshSchemaName('prompts_api');
  afterAll(async () => {
    await dropSchema(schema);
  });
  promptRoutes(() => startGateway({ postgres: { url: postgresUrl(), schema } }));
});
