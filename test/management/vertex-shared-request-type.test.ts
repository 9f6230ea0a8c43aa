/**
 * Vertex AI's `cloudb_shared_request_type` (Priority or Flex PayGo) is served on Vertex's global endpoint
 * only, and never beside `cloudb_request_type: dedicated`. A virtual key or catalog provider that would hold
 * it so (as created, or as a PATCH leaves it) is refused when stored: 400 naming the key, as a config
 * giving both is. Where a credential's settings and a config's meet only in a call, the call is refused
 * (400, before Vertex is called). On an SQLite file and on PostgreSQL.
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
