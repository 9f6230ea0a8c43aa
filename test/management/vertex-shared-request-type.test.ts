/**
 * Vertex AI's `cloudb_shared_request_type` (Priority or Flex PayGo) is served on Vertex's global endpoint
 * only, and never beside `cloudb_request_type: dedicated`. A virtual key or catalog provider that would hold
 * it so (as created, or as a PATCH leaves it) is refused when stored: 400 naming the key, as a config
 * giving both is. A config (stored, or a prompt version's inline one) whose node gives one beside a
 * credential holding the other is refused when stored too: 400 invalid_config naming the node's setting.
 * Where they meet only in a call (a config stored before), the call is refused (400, before Vertex is
 * called). On an SQLite file and on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-ai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { call, client, expectError, type Client } from './http.js';

const KINDS = [
  { path: '/virtual-keys', kind: 'virtual_key' },
  { path: '/providers', kind: 'provider' },
] as const;

function sharedRequestTypeRules(start: () => Promise<TestGateway>): void {
  let gateway: TestGateway;
  let admin: Client;
  let vertex: FakeVertex;

  beforeAll(async () => {
    vertex = await startFakeVertex();
    gateway = await start();
    admin = client(gateway.url, gateway.adminKey);
  });
  afterAll(async () => {
    await gateway?.close();
    await vertex?.close();
  });

  const vertexKey = (slug: string, settings: Record<string, unknown>) => ({
    slug,
    provider: 'vertex-ai',
    cloudb_project_id: 'test-project',
    cloudb_service_account_json: vertex.serviceAccount,
    custom_host: vertex.url,
    ...settings,
  });

  describe.each(KINDS)('$path', ({ path, kind }) => {
    it('refuses a credential created with it beside a region other than global, or beside dedicated', async () => {
      for (const region of ['europe-west4', 'us']) {
        const refused = expectError(
          await admin.post(
            path,
            vertexKey(`regional-${region}`, {
              cloudb_region: region,
              cloudb_shared_request_type: 'priority',
            }),
          ),
          400,
          'invalid_body',
          'cloudb_shared_request_type',
        );
        // The config check's words.
        expect(refused.message).toBe(
          `cloudb_shared_request_type 'priority' is served on Vertex AI's global endpoint only: cloudb_region must be 'global' (got '${region}')`,
        );
        expect((await admin.get(`${path}/regional-${region}`)).status).toBe(404);
      }
      const dedicated = expectError(
        await admin.post(
          path,
          vertexKey('dedicated-flex', {
            cloudb_region: 'global',
            cloudb_request_type: 'dedicated',
            cloudb_shared_request_type: 'flex',
          }),
        ),
        400,
        'invalid_body',
        'cloudb_shared_request_type',
      );
      expect(dedicated.message).toContain("cannot be given with cloudb_request_type 'dedicated'");
      expect((await admin.get(`${path}/dedicated-flex`)).status).toBe(404);

      const global = await admin.post(
        path,
        vertexKey(`global-flex-${kind}`, {
          cloudb_region: 'global',
          cloudb_request_type: 'shared',
          cloudb_shared_request_type: 'flex',
        }),
      );
      expect(global.status, global.text).toBe(200);
    });

    it('refuses a PATCH that would leave it so, judged on the settings as merged', async () => {
      const slug = `patched-${kind}`;
      const created = await admin.post(
        path,
        vertexKey(slug, { cloudb_region: 'global', cloudb_shared_request_type: 'priority' }),
      );
      expect(created.status, created.text).toBe(200);
      // Named by a config: the credential is judged on its own first, a 400 rather than the 409 of what
      // names it.
      const named = kind === 'virtual_key' ? { virtual_key: slug } : { provider: `@${slug}` };
      const config = await admin.post('/configs', { slug: `names-${slug}`, config: named });
      expect(config.status, config.text).toBe(200);

      // The stored shared request type with a new region, or with dedicated.
      const regional = expectError(
        await admin.patch(`${path}/${slug}`, {
          cloudb_region: 'europe-west4',
          cloudb_service_account_json: vertex.serviceAccount,
        }),
        400,
        'invalid_body',
        'cloudb_shared_request_type',
      );
      expect(regional.message).toContain("(got 'europe-west4')");
      expectError(
        await admin.patch(`${path}/${slug}`, { cloudb_request_type: 'dedicated' }),
        400,
        'invalid_body',
        'cloudb_shared_request_type',
      );
      // Refused the same with ?force=true: the credential is judged on its own, not by what names it.
      expectError(
        await admin.patch(`${path}/${slug}?force=true`, { cloudb_request_type: 'dedicated' }),
        400,
        'invalid_body',
        'cloudb_shared_request_type',
      );
      // Nothing of a refused PATCH is stored.
      expect((await admin.get(`${path}/${slug}`)).body.settings).toEqual({
        cloudb_project_id: 'test-project',
        cloudb_region: 'global',
        cloudb_shared_request_type: 'priority',
        custom_host: vertex.url,
      });

      // Removed with the region's change: allowed.
      const moved = await admin.patch(`${path}/${slug}`, {
        cloudb_region: 'europe-west4',
        cloudb_shared_request_type: null,
        cloudb_service_account_json: vertex.serviceAccount,
      });
      expect(moved.status, moved.text).toBe(200);

      // The stored region with a new shared request type.
      expectError(
        await admin.patch(`${path}/${slug}`, { cloudb_shared_request_type: 'flex' }),
        400,
        'invalid_body',
        'cloudb_shared_request_type',
      );
      const toGlobal = await admin.patch(`${path}/${slug}`, {
        cloudb_region: 'global',
        cloudb_shared_request_type: 'flex',
        cloudb_service_account_json: vertex.serviceAccount,
      });
      expect(toGlobal.status, toGlobal.text).toBe(200);
      expect(toGlobal.body.settings).toMatchObject({
        cloudb_region: 'global',
        cloudb_shared_request_type: 'flex',
      });
    });
  });

  describe.each(KINDS)('a config naming one of $path', ({ path, kind }) => {
    const named = (slug: string) =>
      kind === 'virtual_key' ? { virtual_key: `${slug}-${kind}` } : { provider: `@${slug}-${kind}` };
    const template = JSON.stringify([{ role: 'user', content: 'hi' }]);

    beforeAll(async () => {
      for (const [slug, settings] of [
        ['flex-global', { cloudb_region: 'global', cloudb_shared_request_type: 'flex' }],
        ['regional', { cloudb_region: 'europe-west4' }],
        ['dedicated', { cloudb_region: 'global', cloudb_request_type: 'dedicated' }],
      ] as const) {
        const created = await admin.post(path, vertexKey(`${slug}-${kind}`, settings));
        expect(created.status, created.text).toBe(200);
      }
    });

    it.each([
      [
        'its region beside the flex the key holds',
        { cloudb_region: 'europe-west4' },
        'flex-global',
        'cloudb_region',
        "(got 'europe-west4')",
      ],
      [
        'its priority beside the region the key holds',
        { cloudb_shared_request_type: 'priority' },
        'regional',
        'cloudb_shared_request_type',
        "(got 'europe-west4')",
      ],
      [
        'its flex beside the dedicated the key holds',
        { cloudb_shared_request_type: 'flex' },
        'dedicated',
        'cloudb_shared_request_type',
        "cloudb_request_type 'dedicated'",
      ],
      [
        'its dedicated beside the flex the key holds',
        { cloudb_request_type: 'dedicated' },
        'flex-global',
        'cloudb_request_type',
        "cloudb_request_type 'dedicated'",
      ],
    ] as const)("refuses a node with %s, naming the node's setting", async (_, own, slug, key, words) => {
      const config = { ...named(slug), ...own };
      const refused = expectError(
        await admin.post('/configs', { slug: `clash-${slug}-${key}-${kind}`, config }),
        400,
        'invalid_config',
        `config.${key}`,
      );
      expect(refused.message).toContain(words);
      expect(refused.message).toContain(
        kind === 'virtual_key' ? `virtual key "${slug}-${kind}"` : `provider "@${slug}-${kind}"`,
      );
      expect((await admin.get(`/configs/clash-${slug}-${key}-${kind}`)).status).toBe(404);
    });

    it('refuses it in a target, and in a target taking the credential from its parent', async () => {
      expectError(
        await admin.post('/configs', {
          slug: `clash-in-target-${kind}`,
          config: {
            strategy: { mode: 'fallback' },
            targets: [
              { provider: 'openai', api_key: 'sk-first' },
              { ...named('flex-global'), cloudb_region: 'us' },
            ],
          },
        }),
        400,
        'invalid_config',
        'config.targets[1].cloudb_region',
      );
      expectError(
        await admin.post('/configs', {
          slug: `clash-inherited-${kind}`,
          config: {
            ...named('flex-global'),
            strategy: { mode: 'fallback' },
            targets: [{ cloudb_region: 'europe-west4', retry: { attempts: 1 } }],
          },
        }),
        400,
        'invalid_config',
        'config.targets[0].cloudb_region',
      );
    });

    it("keeps what Vertex serves: the node's own global region over the key's", async () => {
      const stored = await admin.post('/configs', {
        slug: `priority-global-${kind}`,
        config: { ...named('regional'), cloudb_region: 'global', cloudb_shared_request_type: 'priority' },
      });
      expect(stored.status, stored.text).toBe(200);
    });

    it("refuses it in a prompt_id target, with the credential its prompt's destination names", async () => {
      for (const [slug, destination] of [
        [`to-regional-${kind}`, named('regional')],
        [`to-regional-inline-${kind}`, { config: named('regional') }],
      ] as const) {
        const prompt = await admin.post('/prompts', { slug, string: template, ...destination });
        expect(prompt.status, prompt.text).toBe(200);
        const refused = expectError(
          await admin.post('/configs', {
            slug: `clash-through-${slug}`,
            config: { prompt_id: slug, cloudb_shared_request_type: 'priority' },
          }),
          400,
          'invalid_config',
          'config.cloudb_shared_request_type',
        );
        expect(refused.message).toContain(`the prompt "${slug}" (version 1) sends its calls`);
        expect(refused.message).toContain("(got 'europe-west4')");
        expectError(
          await admin.post('/configs', {
            slug: `clash-through-target-${slug}`,
            config: {
              strategy: { mode: 'fallback' },
              targets: [{ prompt_id: slug, cloudb_shared_request_type: 'priority' }],
            },
          }),
          400,
          'invalid_config',
          'config.targets[0].cloudb_shared_request_type',
        );
        // The target's own global region over the credential's is what Vertex serves.
        const stored = await admin.post('/configs', {
          slug: `global-through-${slug}`,
          config: { prompt_id: slug, cloudb_region: 'global', cloudb_shared_request_type: 'priority' },
        });
        expect(stored.status, stored.text).toBe(200);
      }
    });

    it("refuses it in a PATCH of a config and in a prompt version's inline config", async () => {
      const created = await admin.post('/configs', {
        slug: `patched-config-${kind}`,
        config: named('flex-global'),
      });
      expect(created.status, created.text).toBe(200);
      expectError(
        await admin.patch(`/configs/patched-config-${kind}`, {
          config: { ...named('flex-global'), cloudb_region: 'europe-west4' },
        }),
        400,
        'invalid_config',
        'config.cloudb_region',
      );
      const inline = { ...named('regional'), cloudb_shared_request_type: 'flex' };
      expectError(
        await admin.post('/prompts', { slug: `clash-prompt-${kind}`, string: template, config: inline }),
        400,
        'invalid_config',
        'config.cloudb_shared_request_type',
      );
      const prompt = await admin.post('/prompts', {
        slug: `good-prompt-${kind}`,
        string: template,
        config: named('regional'),
      });
      expect(prompt.status, prompt.text).toBe(200);
      expectError(
        await admin.put(`/prompts/good-prompt-${kind}`, { string: template, config: inline }),
        400,
        'invalid_config',
        'config.cloudb_shared_request_type',
      );
    });
  });

  it('refuses a config naming a key stored with the clash before the rule, naming the key', async () => {
    const created = await admin.post(
      '/virtual-keys',
      vertexKey('clashing-before', { cloudb_region: 'global' }),
    );
    expect(created.status, created.text).toBe(200);
    const store = gateway.server.deps.store;
    const workspace = created.body.workspace_id as string;
    const stored = await store.getCredential(workspace, 'virtual_key', 'clashing-before');
    await store.updateCredential(workspace, 'virtual_key', 'clashing-before', {
      secret: { ...stored!.secret, cloudb_region: 'us', cloudb_shared_request_type: 'priority' },
    });
    expectError(
      await admin.post('/configs', {
        slug: 'names-clashing-before',
        config: { virtual_key: 'clashing-before' },
      }),
      400,
      'invalid_config',
      'config.virtual_key',
    );
  });

  it('a call of a config stored before its key and its node clashed is refused, and so is the PATCH', async () => {
    const key = await admin.post('/virtual-keys', vertexKey('turns-dedicated', { cloudb_region: 'global' }));
    expect(key.status, key.text).toBe(200);
    const config = await admin.post('/configs', {
      slug: 'flex-on-turns-dedicated',
      config: {
        virtual_key: 'turns-dedicated',
        cloudb_shared_request_type: 'flex',
        override_params: { model: 'gemini-2.5-flash' },
      },
    });
    expect(config.status, config.text).toBe(200);

    // The key turned dedicated would make the config's calls fail: what names it is judged.
    const dedicated = { cloudb_request_type: 'dedicated' };
    const refused = expectError(
      await admin.patch('/virtual-keys/turns-dedicated', dedicated),
      409,
      'conflict',
      'cloudb_request_type',
    );
    expect(refused.message).toContain('configs "flex-on-turns-dedicated" (config.virtual_key)');
    expect((await admin.patch('/virtual-keys/turns-dedicated?force=true', dedicated)).status).toBe(200);

    const before = vertex.requests.length;
    const called = await call(
      gateway.url,
      gateway.adminKey,
      'POST',
      '/chat/completions',
      { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] },
      { 'x-gateway-config': 'flex-on-turns-dedicated' },
    );
    const error = expectError(called, 400, 'provider_config_error', 'cloudb_shared_request_type');
    expect(error.message).toContain("cannot be given with cloudb_request_type 'dedicated'");
    expect(vertex.requests.length).toBe(before);
  });

  it('a secret of a credential stored so before the rule is still rotated at once', async () => {
    const created = await admin.post(
      '/virtual-keys',
      vertexKey('stored-before', { cloudb_region: 'global', api_key: 'ya29.first-token-0123456789' }),
    );
    expect(created.status, created.text).toBe(200);
    const store = gateway.server.deps.store;
    const workspace = created.body.workspace_id as string;
    const stored = await store.getCredential(workspace, 'virtual_key', 'stored-before');
    // Written as the store held it before the rule: Flex PayGo with a regional endpoint.
    await store.updateCredential(workspace, 'virtual_key', 'stored-before', {
      secret: { ...stored!.secret, cloudb_region: 'europe-west4', cloudb_shared_request_type: 'flex' },
    });
    const rotated = await admin.patch('/virtual-keys/stored-before', {
      api_key: 'ya29.second-token-0123456789',
    });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.api_key_hint).toBe('…6789');
  });
}

describe("Vertex AI's shared request type on stored credentials (SQLite)", () => {
  sharedRequestTypeRules(() => startGateway());
});

describeWithPostgres("Vertex AI's shared request type on stored credentials (PostgreSQL)", () => {
  const schema = freshSchemaName('vertex_shared_type');
  sharedRequestTypeRules(() => startGateway({ postgres: { url: postgresUrl(), schema } }));
  afterAll(async () => {
    await dropSchema(schema);
  });
});
