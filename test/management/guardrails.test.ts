/**
 * /v1/guardrails through HTTP against a real gateway, on an SQLite file and on PostgreSQL: create, read,
 * update (new versions), delete, validation naming the field, redaction and workspace isolation.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Repositories } from '../../src/store/types.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { client, expectError, startedWithAdmin, ok } from './http.js';

const noForbiddenWords = {
  'default.contains': { operator: 'none', words: ['forbidden'] },
  deny: true,
};
const signedWebhook = (token: string) => ({
  id: 'compliance-webhook',
  'default.webhook': {
    webhookURL: 'https://hooks.example/verdict',
    headers: { Authorization: `Bearer ${token}` },
  },
  deny: true,
  on_fail: { feedback: { value: -1, weight: 1, metadata: { team: 'compliance' } } },
});

/** Counts the reads of all of a workspace's guardrails (`listGuardrails`), on the store or in a
 * transaction, until `restore`. */
function countGuardrailListings(gateway: TestGateway) {
  const store = gateway.server.deps.store;
  const original = { listGuardrails: store.listGuardrails, transaction: store.transaction };
  const counted = { listings: 0, restore: () => Object.assign(store, original) };
  const counting = <T extends Repositories>(repositories: T): T => ({
    ...repositories,
    listGuardrails: (...args: Parameters<Repositories['listGuardrails']>) => {
      counted.listings++;
      return repositories.listGuardrails(...args);
    },
  });
  store.listGuardrails = counting(store).listGuardrails;
  store.transaction = (work) => original.transaction((tx) => work(counting(tx)));
  return counted;
}

function guardrailRoutes(start: () => Promise<TestGateway>): void {
  const started = startedWithAdmin(start);

  it('creates, reads, versions and deletes a guardrail by slug or id', async () => {
    const created = await ok(
      started.admin.post('/guardrails', {
        slug: 'no-forbidden-words',
        name: 'No forbidden words',
        guardrail: noForbiddenWords,
      }),
    );
    expect(created.body).toMatchObject({
      object: 'guardrail',
      id: expect.stringMatching(/^grd_/),
      slug: 'no-forbidden-words',
      name: 'No forbidden words',
      version: 1,
      guardrail: noForbiddenWords,
      workspace_id: expect.any(String),
      organisation_id: expect.any(String),
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
    });
    const id = created.body.id as string;

    for (const address of ['no-forbidden-words', id]) {
      const fetched = await ok(started.admin.get(`/guardrails/${address}`));
      expect(fetched.body).toEqual(created.body);
    }
    const listed = await started.admin.get('/guardrails');
    expect(listed.body.object).toBe('list');
    expect(listed.body.data.map((g: { slug: string }) => g.slug)).toContain('no-forbidden-words');

    // A new name keeps the version; a new definition is version 2, and GET shows the latest.
    const renamed = await started.admin.patch('/guardrails/no-forbidden-words', { name: 'Renamed' });
    expect(renamed.body).toMatchObject({ name: 'Renamed', version: 1, guardrail: noForbiddenWords });
    const v2 = { ...noForbiddenWords, deny: false, async: true };
    const updated = await ok(started.admin.patch(`/guardrails/${id}`, { guardrail: v2 }));
    expect(updated.body).toMatchObject({ id, version: 2, name: 'Renamed', guardrail: v2 });
    expect((await started.admin.get('/guardrails/no-forbidden-words')).body).toMatchObject({
      version: 2,
      guardrail: v2,
    });

    const versions = await ok(started.admin.get('/guardrails/no-forbidden-words/versions'));
    expect(versions.body.object).toBe('list');
    expect(versions.body.data).toEqual([
      {
        object: 'guardrail.version',
        guardrail_id: id,
        version: 1,
        guardrail: noForbiddenWords,
        created_at: expect.any(Number),
      },
      {
        object: 'guardrail.version',
        guardrail_id: id,
        version: 2,
        guardrail: v2,
        created_at: expect.any(Number),
      },
    ]);

    const deleted = await started.admin.delete('/guardrails/no-forbidden-words');
    expect(deleted.body).toEqual({ object: 'guardrail.deleted', id, deleted: true });
    for (const [address, reply] of [
      ['no-forbidden-words', await started.admin.get('/guardrails/no-forbidden-words')],
      [id, await started.admin.get(`/guardrails/${id}`)],
      ['no-forbidden-words', await started.admin.get('/guardrails/no-forbidden-words/versions')],
      ['no-forbidden-words', await started.admin.patch('/guardrails/no-forbidden-words', { name: 'x' })],
      ['no-forbidden-words', await started.admin.delete('/guardrails/no-forbidden-words')],
    ] as const) {
      expect(expectError(reply, 404, 'not_found', 'id').message).toContain(address);
    }
    expect((await started.admin.get('/guardrails')).body.data.map((g: { id: string }) => g.id)).not.toContain(
      id,
    );

    // The slug is free again: a new guardrail, with a history of its own.
    const again = await ok(
      started.admin.post('/guardrails', {
        slug: 'no-forbidden-words',
        guardrail: noForbiddenWords,
      }),
    );
    expect(again.body).toMatchObject({ version: 1, name: 'no-forbidden-words' });
    expect(again.body.id).not.toBe(id);
  });

  it('never answers with a credential held in a definition, versions included', async () => {
    const created = await ok(
      started.admin.post('/guardrails', {
        slug: 'webhook-verdict',
        guardrail: signedWebhook('hook-secret-v1'),
      }),
    );
    expect(created.body.guardrail['default.webhook']).toEqual({
      webhookURL: 'https://hooks.example/verdict',
      headers: { Authorization: '[REDACTED]' },
    });
    expect(created.body.guardrail.on_fail).toEqual(signedWebhook('x').on_fail);
    const updated = await started.admin.patch('/guardrails/webhook-verdict', {
      guardrail: signedWebhook('hook-secret-v2'),
    });
    expect(updated.body.version).toBe(2);
    for (const reply of [
      created,
      updated,
      await started.admin.get('/guardrails/webhook-verdict'),
      await started.admin.get('/guardrails'),
      await started.admin.get('/guardrails/webhook-verdict/versions'),
    ]) {
      expect(reply.status, reply.text).toBe(200);
      expect(reply.text).not.toContain('hook-secret');
    }
    // What the engine reads keeps the real value.
    const stored = await started.gateway.server.deps.lookups.guardrailBySlug(
      created.body.workspace_id,
      'webhook-verdict',
    );
    expect(stored?.guardrail).toEqual(signedWebhook('hook-secret-v2'));
  });

  it("keeps a log check's [REDACTED] header only while its logURL is unchanged", async () => {
    const log = (logURL: string, authorization: string) => ({
      'default.log': { logURL, headers: { Authorization: authorization } },
      deny: false,
    });
    await ok(
      started.admin.post('/guardrails', {
        slug: 'siem-log',
        guardrail: log('https://siem.example/ingest', 'Bearer siem-secret'),
      }),
    );
    const moved = await started.admin.patch('/guardrails/siem-log', {
      guardrail: log('https://collector.attacker.example/', '[REDACTED]'),
    });
    expect(
      expectError(moved, 400, 'invalid_body', 'guardrail.default.log.headers.Authorization').message,
    ).toContain('send the real value');
    await ok(
      started.admin.patch('/guardrails/siem-log', {
        guardrail: { ...log('https://siem.example/ingest', '[REDACTED]'), deny: true },
      }),
    );
    const stored = await started.gateway.server.deps.lookups.guardrailBySlug(
      (await started.admin.get('/guardrails/siem-log')).body.workspace_id,
      'siem-log',
    );
    expect(stored?.guardrail).toEqual({
      ...log('https://siem.example/ingest', 'Bearer siem-secret'),
      deny: true,
    });
  });

  it.each([
    [{ guardrail: noForbiddenWords }, 'invalid_body', 'slug'],
    [{ slug: 'g' }, 'invalid_body', 'guardrail'],
    [{ slug: 'g', guardrail: 'default.contains' }, 'invalid_body', 'guardrail'],
    [{ slug: 'g', guardrail: [noForbiddenWords] }, 'invalid_body', 'guardrail'],
    [{ slug: '{g}', guardrail: noForbiddenWords }, 'invalid_body', 'slug'],
    [{ slug: 'g', name: '', guardrail: noForbiddenWords }, 'invalid_body', 'name'],
    [{ slug: 'g', guardrail: noForbiddenWords, version: 2 }, 'invalid_body', 'version'],
    [{ slug: 'g', guardrail: { ...noForbiddenWords, deny: 'yes' } }, 'invalid_config', 'guardrail.deny'],
    [{ slug: 'g', guardrail: { ...noForbiddenWords, async: 1 } }, 'invalid_config', 'guardrail.async'],
    [{ slug: 'g', guardrail: { ...noForbiddenWords, id: 7 } }, 'invalid_config', 'guardrail.id'],
    [
      { slug: 'g', guardrail: { 'default.contains': ['forbidden'] } },
      'invalid_config',
      'guardrail.default.contains',
    ],
    [{ slug: 'g', guardrail: { deny: true } }, 'invalid_config', 'guardrail'],
    [{ slug: 'g', guardrail: {} }, 'invalid_config', 'guardrail'],
    [
      { slug: 'g', guardrail: { ...noForbiddenWords, on_fail: { deny: 'no' } } },
      'invalid_config',
      'guardrail.on_fail.deny',
    ],
    [
      { slug: 'g', guardrail: { ...noForbiddenWords, on_fail: { feedback: { value: 'low' } } } },
      'invalid_config',
      'guardrail.on_fail.feedback.value',
    ],
    [
      { slug: 'g', guardrail: { ...noForbiddenWords, on_success: { feedbak: {} } } },
      'invalid_config',
      'guardrail.on_success.feedbak',
    ],
    // The check registry judges every check: a known id, valid parameters.
    [{ slug: 'g', guardrail: { 'default.nope': {} } }, 'invalid_config', 'guardrail.default.nope'],
    [
      { slug: 'g', guardrail: { 'default.contains': { words: ['x'], operator: 'some' } } },
      'invalid_config',
      'guardrail.default.contains.operator',
    ],
    [
      { slug: 'g', guardrail: { 'default.wordCount': { minWords: 9, maxWords: 1 }, deny: true } },
      'invalid_config',
      'guardrail.default.wordCount.maxWords',
    ],
    // The hook form is not what a stored guardrail holds: its `checks` list is refused by name.
    [
      {
        slug: 'g',
        guardrail: { id: 'h', checks: [{ id: 'default.contains', parameters: { words: ['x'] } }] },
      },
      'invalid_config',
      'guardrail.checks',
    ],
  ])('refuses %j (%s naming %s)', async (body, code, param) => {
    expectError(await started.admin.post('/guardrails', body), 400, code, param);
    expect((await started.admin.get('/guardrails/g')).status).toBe(404);
  });

  it('PATCH validates the new definition and refuses an empty patch', async () => {
    expect(
      (await started.admin.post('/guardrails', { slug: 'patchable', guardrail: noForbiddenWords })).status,
    ).toBe(200);
    expectError(await started.admin.patch('/guardrails/patchable', {}), 400, 'invalid_body', null);
    expectError(
      await started.admin.patch('/guardrails/patchable', { guardrail: { ...noForbiddenWords, deny: 'no' } }),
      400,
      'invalid_config',
      'guardrail.deny',
    );
    expectError(
      await started.admin.patch('/guardrails/patchable', { slug: 'renamed' }),
      400,
      'invalid_body',
      'slug',
    );
    expectError(
      await started.admin.patch('/guardrails/patchable', { guardrail: null }),
      400,
      'invalid_body',
      'guardrail',
    );
    const current = await started.admin.get('/guardrails/patchable');
    expect(current.body).toMatchObject({ version: 1, guardrail: noForbiddenWords });
    expect((await started.admin.get('/guardrails/patchable/versions')).body.data).toHaveLength(1);
  });

  it('takes a check disabled with is_enabled, as a config carries it inline', async () => {
    const guardrail = {
      ...noForbiddenWords,
      'default.wordCount': { minWords: 1, is_enabled: true },
      'default.regexReplace': { rule: 'x', is_enabled: false },
    };
    const created = await ok(started.admin.post('/guardrails', { slug: 'with-disabled', guardrail }));
    expect(created.body).toMatchObject({ guardrail });
    expectError(
      await started.admin.post('/guardrails', {
        slug: 'bad-enabled',
        guardrail: { 'default.wordCount': { minWords: 1, is_enabled: 'no' } },
      }),
      400,
      'invalid_config',
      'guardrail.default.wordCount.is_enabled',
    );
  });

  it('a duplicate slug is 409', async () => {
    const body = { slug: 'dup-guardrail', guardrail: noForbiddenWords };
    expect((await started.admin.post('/guardrails', body)).status).toBe(200);
    const error = expectError(await started.admin.post('/guardrails', body), 409, 'conflict', 'slug');
    expect(error.message).toContain('dup-guardrail');
  });

  it("keeps each workspace's guardrails to itself", async () => {
    const workspace = await ok(
      started.admin.post('/workspaces', {
        name: 'Research',
        slug: 'research-guardrails',
      }),
    );
    const research = client(started.gateway.url, workspace.body.admin_key.key as string);

    const mine = await started.admin.post('/guardrails', { slug: 'same-slug', guardrail: noForbiddenWords });
    const theirs = await research.post('/guardrails', {
      slug: 'same-slug',
      guardrail: { ...noForbiddenWords, deny: false },
    });
    expect(mine.status, mine.text).toBe(200);
    expect(theirs.status, theirs.text).toBe(200);
    expect(theirs.body.workspace_id).toBe(workspace.body.id);
    expect(theirs.body.id).not.toBe(mine.body.id);

    expect((await research.get('/guardrails/same-slug')).body.id).toBe(theirs.body.id);
    expect((await research.get('/guardrails')).body.data.map((g: { id: string }) => g.id)).toEqual([
      theirs.body.id,
    ]);
    for (const reply of [
      await research.get(`/guardrails/${mine.body.id}`),
      await research.get(`/guardrails/${mine.body.id}/versions`),
      await research.patch(`/guardrails/${mine.body.id}`, { name: 'taken over' }),
      await research.delete(`/guardrails/${mine.body.id}`),
    ]) {
      expectError(reply, 404, 'not_found', 'id');
    }
    expect((await started.admin.get('/guardrails/same-slug')).body).toMatchObject({
      id: mine.body.id,
      name: 'same-slug',
      guardrail: noForbiddenWords,
    });
  });

  it('keeps a guardrail that active configs or versions of prompts list, unless forced', async () => {
    const stored = await ok(
      started.admin.post('/guardrails', {
        slug: 'kept-policy',
        guardrail: noForbiddenWords,
      }),
    );
    const id = stored.body.id as string;
    const target = { provider: 'openai', api_key: 'sk-listed-guardrail-0001' };
    for (const [slug, config] of [
      [
        'guarded-target',
        {
          strategy: { mode: 'fallback' },
          // An inline guardrail whose id is the slug is no use of the stored one.
          targets: [
            target,
            { ...target, output_guardrails: [{ ...noForbiddenWords, id: 'kept-policy' }, id] },
          ],
        },
      ],
      ['guarded-top', { ...target, input_guardrails: ['kept-policy'] }],
      ['guarded-archived', { ...target, output_guardrails: ['kept-policy'] }],
      ['unguarded', { ...target, input_guardrails: [{ ...noForbiddenWords, id: 'kept-policy' }] }],
    ] as const) {
      await ok(started.admin.post('/configs', { slug, config }));
    }
    expect((await started.admin.patch('/configs/guarded-archived', { status: 'archived' })).status).toBe(200);
    // Version 1 lists it in its inline config; version 2 does not.
    const template = JSON.stringify([{ role: 'user', content: 'hi' }]);
    await ok(
      started.admin.post('/prompts', {
        slug: 'guarded-prompt',
        string: template,
        config: { ...target, input_guardrails: ['kept-policy'] },
      }),
    );
    expect(
      (await started.admin.put('/prompts/guarded-prompt', { string: template, config: target })).status,
    ).toBe(200);

    for (const address of ['kept-policy', id]) {
      const refused = expectError(
        await started.admin.delete(`/guardrails/${address}`),
        409,
        'conflict',
        'id',
      );
      expect(refused.message).toContain('guardrail "kept-policy"');
      expect(refused.message).toContain(
        'configs "guarded-target" (config.targets[1].output_guardrails[1]), "guarded-top" (config.input_guardrails[0])',
      );
      expect(refused.message).toContain('prompts "guarded-prompt" (version 1)');
      expect(refused.message).not.toContain('guarded-archived');
      expect(refused.message).not.toContain('unguarded');
      expect(refused.message).toContain('?force=true');
    }
    expect((await started.admin.get('/guardrails/kept-policy')).status).toBe(200);
    expectError(
      await started.admin.delete('/guardrails/kept-policy?force=maybe'),
      400,
      'invalid_query',
      'force',
    );

    const forced = await ok(started.admin.delete('/guardrails/kept-policy?force=true'));
    expect(forced.body).toEqual({ object: 'guardrail.deleted', id, deleted: true });
  });

  it('refuses a change whose checks cannot run on the side an active config lists it, unless forced', async () => {
    await ok(
      started.admin.post('/guardrails', {
        slug: 'side-policy',
        guardrail: noForbiddenWords,
      }),
    );
    const target = { provider: 'openai', api_key: 'sk-listed-guardrail-0002' };
    for (const [slug, config] of [
      ['side-answers', { ...target, output_guardrails: ['side-policy'] }],
      ['side-requests', { ...target, input_guardrails: ['side-policy'] }],
    ] as const) {
      await ok(started.admin.post('/configs', { slug, config }));
    }
    // Gates the call on its metadata: it runs before the request only, so the answers' list cannot run it.
    const beforeOnly = { 'default.requiredMetadataKeys': { metadataKeys: ['team'] }, deny: true };
    const refused = expectError(
      await started.admin.patch('/guardrails/side-policy', { guardrail: beforeOnly }),
      409,
      'conflict',
      'guardrail.default.requiredMetadataKeys',
    );
    expect(refused.message).toContain('configs "side-answers" (config.output_guardrails[0])');
    expect(refused.message).not.toContain('side-requests');
    expect(refused.message).toContain('?force=true');
    expect((await started.admin.get('/guardrails/side-policy')).body.version).toBe(1);

    // A check that runs on both sides changes it as before; a forced change is stored.
    await ok(
      started.admin.patch('/guardrails/side-policy', {
        guardrail: { ...noForbiddenWords, async: true },
      }),
    );
    const forced = await ok(
      started.admin.patch('/guardrails/side-policy?force=true', { guardrail: beforeOnly }),
    );
    expect(forced.body.version).toBe(3);
  });

  it('finds the guardrails judging through a key or config by what each version records, reading no others', async () => {
    const store = started.gateway.server.deps.store;
    const judge = (through: Record<string, string>) => ({
      'default.modelJudge': { instructions: 'Is it polite?', ...through },
    });
    const key = await ok(
      started.admin.post('/virtual-keys', {
        slug: 'indexed-judge',
        provider: 'openai',
        api_key: 'sk-indexed',
      }),
    );
    const route = { provider: 'openai', api_key: 'sk-indexed-route-0001' };
    expect((await started.admin.post('/configs', { slug: 'indexed-route', config: route })).status).toBe(200);
    for (const [slug, through] of [
      ['indexed-by-key', { virtual_key: 'indexed-judge' }],
      ['indexed-by-config', { config: 'indexed-route' }],
      ['indexed-unjudged', undefined],
    ] as const) {
      const guardrail = through ? judge(through) : noForbiddenWords;
      await ok(started.admin.post('/guardrails', { slug, guardrail }));
    }
    const workspaceId = key.body.workspace_id as string;
    // Written with each version: nothing is left to record, and each is found by what it names.
    expect(await store.listGuardrailVersionsWithoutReferences(workspaceId)).toEqual([]);
    const slugsReferencing = async (names: string[]) =>
      (await store.listGuardrailsReferencing(workspaceId, names)).map((guardrail) => guardrail.slug);
    expect(await slugsReferencing(['virtual_key:indexed-judge'])).toEqual(['indexed-by-key']);
    expect(await slugsReferencing(['config:indexed-route'])).toEqual(['indexed-by-config']);
    // As stored before the started.gateway kept that record, or by a node that does not: naming the key by id.
    await store.createGuardrail({
      organisation_id: key.body.organisation_id as string,
      workspace_id: workspaceId,
      slug: 'indexed-legacy',
      name: 'indexed-legacy',
      guardrail: judge({ virtual_key: key.body.id as string }),
    });

    const counted = countGuardrailListings(started.gateway);
    try {
      const refused = expectError(
        await started.admin.delete('/virtual-keys/indexed-judge'),
        409,
        'conflict',
        'slug',
      );
      expect(refused.message).toContain(
        'guardrails "indexed-by-key" (guardrail.default.modelJudge.virtual_key), ' +
          '"indexed-legacy" (guardrail.default.modelJudge.virtual_key)',
      );
      const archive = expectError(
        await started.admin.patch('/configs/indexed-route', { status: 'archived' }),
        409,
        'conflict',
        'status',
      );
      expect(archive.message).toContain(
        'guardrails "indexed-by-config" (guardrail.default.modelJudge.config)',
      );
      expect(counted.listings).toBe(0);
    } finally {
      counted.restore();
    }
    expect(await store.listGuardrailVersionsWithoutReferences(workspaceId)).toEqual([]);

    // A guardrail counts by its current version: once it judges through the config, the key is free.
    await ok(
      started.admin.patch('/guardrails/indexed-by-key', {
        guardrail: judge({ config: 'indexed-route' }),
      }),
    );
    expect((await started.admin.delete('/guardrails/indexed-legacy')).status).toBe(200);
    expect(await slugsReferencing(['virtual_key:indexed-judge'])).toEqual([]);
    expect((await started.admin.delete('/virtual-keys/indexed-judge')).status).toBe(200);
    const refused = expectError(await started.admin.delete('/configs/indexed-route'), 409, 'conflict', 'id');
    expect(refused.message).toContain(
      'guardrails "indexed-by-key" (guardrail.default.modelJudge.config), ' +
        '"indexed-by-config" (guardrail.default.modelJudge.config)',
    );
    for (const slug of ['indexed-by-key', 'indexed-by-config', 'indexed-unjudged']) {
      expect((await started.admin.delete(`/guardrails/${slug}`)).status).toBe(200);
    }
    expect((await started.admin.delete('/configs/indexed-route')).status).toBe(200);
  });

  it('the lookup the engine reads follows every change at once on the node that made it', async () => {
    // Cached for far longer than this test runs: only the change announcement can refresh it.
    const lookups = started.gateway.server.deps.lookups;
    const created = await started.admin.post('/guardrails', {
      slug: 'looked-up',
      guardrail: noForbiddenWords,
    });
    const workspaceId = created.body.workspace_id as string;
    expect(await lookups.guardrailBySlug(workspaceId, 'missing-one')).toBeUndefined();
    expect((await lookups.guardrailBySlug(workspaceId, 'looked-up'))?.version).toBe(1);

    const v2 = { ...noForbiddenWords, deny: false };
    await started.admin.patch('/guardrails/looked-up', { guardrail: v2 });
    expect(await lookups.guardrailBySlug(workspaceId, 'looked-up')).toMatchObject({
      version: 2,
      guardrail: v2,
    });

    await started.admin.post('/guardrails', { slug: 'missing-one', guardrail: noForbiddenWords });
    expect((await lookups.guardrailBySlug(workspaceId, 'missing-one'))?.slug).toBe('missing-one');

    await started.admin.delete('/guardrails/looked-up');
    expect(await lookups.guardrailBySlug(workspaceId, 'looked-up')).toBeUndefined();
  });
}

const LONG_CACHE = { GATEWAY_LOOKUP_CACHE_TTL_MS: String(10 * 60_000) };

describe('/v1/guardrails on SQLite', () => {
  guardrailRoutes(() => startGateway({ env: LONG_CACHE }));
});

describeWithPostgres('/v1/guardrails on PostgreSQL', () => {
  const schema = freshSchemaName('guardrails_api');
  afterAll(async () => {
    await dropSchema(schema);
  });
  guardrailRoutes(() => startGateway({ env: LONG_CACHE, postgres: { url: postgresUrl(), schema } }));
});
