/**
 * Workspaces are walls: a key sees and uses only its own workspace's logs, keys, virtual keys, catalog
 * providers and configs, whether it lists them, asks for them by id, changes them, or names them in a
 * model call. Run on SQLite and on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type StartGatewayOptions, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { call, client, expectError, type Client } from '../management/http.js';

interface Tenant {
  name: string;
  workspaceId: string;
  adminKey: string;
  adminKeyId: string;
  admin: Client;
  memberKey: string;
  member: Client;
  virtualKey: { id: string; slug: string };
  provider: { id: string; slug: string };
  config: { id: string; slug: string };
  /** A word that appears only in this tenant's model calls. */
  marker: string;
  logIds: string[];
}

async function waitForLogs(logs: Client, atLeast: number): Promise<Array<Record<string, unknown>>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const reply = await logs.get('/logs?limit=1000');
    if (reply.status !== 200) throw new Error(reply.text);
    if (reply.body.data.length >= atLeast || Date.now() > deadline) return reply.body.data;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function tenancySuite(options: () => StartGatewayOptions) {
  let gateway: TestGateway;
  let fake: FakeUpstream;
  let a: Tenant;
  let b: Tenant;

  const chat = (key: string, marker: string, headers: Record<string, string>) =>
    call(
      gateway.url,
      key,
      'POST',
      '/chat/completions',
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `hello from ${marker}` }] },
      headers,
    );

  async function setUpTenant(name: string, adminKey: string): Promise<Tenant> {
    const admin = client(gateway.url, adminKey);
    const self = (await admin.get('/api-keys')).body.data[0];
    const member = await admin.post('/api-keys', { name: `${name} member`, role: 'member' });
    const vk = await admin.post('/virtual-keys', {
      slug: `${name}-vk`,
      provider: 'openai',
      api_key: `sk-${name}-virtual-key`,
      custom_host: fake.url,
    });
    const provider = await admin.post('/providers', {
      slug: `${name}-catalog`,
      provider: 'openai',
      api_key: `sk-${name}-catalog`,
      custom_host: fake.url,
    });
    const config = await admin.post('/configs', {
      slug: `${name}-config`,
      config: { virtual_key: `${name}-vk`, retry: { attempts: 1 } },
    });
    for (const reply of [member, vk, provider, config]) expect(reply.status, reply.text).toBe(200);
    const marker = `marker-${name}-${Math.random().toString(36).slice(2)}`;
    const tenant: Tenant = {
      name,
      workspaceId: self.workspace_id,
      adminKey,
      adminKeyId: self.id,
      admin,
      memberKey: member.body.key,
      member: client(gateway.url, member.body.key),
      virtualKey: { id: vk.body.id, slug: vk.body.slug },
      provider: { id: provider.body.id, slug: provider.body.slug },
      config: { id: config.body.id, slug: config.body.slug },
      marker,
      logIds: [],
    };
    // Real model calls through each way of naming stored credentials.
    for (const headers of [
      { 'x-gateway-virtual-key': tenant.virtualKey.slug } as Record<string, string>,
      { 'x-gateway-provider': `@${tenant.provider.slug}` },
      { 'x-gateway-config': tenant.config.slug },
    ]) {
      const reply = await chat(adminKey, marker, headers);
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body.choices[0].message.content).toContain(marker);
    }
    const logs = await waitForLogs(admin, 3);
    tenant.logIds = logs.map((record) => record.id as string);
    return tenant;
  }

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'tenancy' });
    gateway = await startGateway(options());
    a = await setUpTenant('alpha', gateway.adminKey);
    const workspace = await client(gateway.url, gateway.adminKey).post('/workspaces', {
      name: 'Bravo',
      slug: 'bravo',
    });
    expect(workspace.status, workspace.text).toBe(200);
    b = await setUpTenant('bravo', workspace.body.admin_key.key);
    expect(a.workspaceId).not.toBe(b.workspaceId);
  });

  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const pairs = () =>
    [
      [a, b],
      [b, a],
    ] as const;

  it('logs: each workspace sees only its own calls, listed or by id', async () => {
    for (const [self, other] of pairs()) {
      for (const reader of [self.admin, self.member]) {
        const logs = await reader.get('/logs?limit=1000');
        expect(logs.status).toBe(200);
        expect(logs.body.data.length).toBeGreaterThanOrEqual(3);
        for (const record of logs.body.data) expect(record.workspace_id).toBe(self.workspaceId);
        expect(logs.text).toContain(self.marker);
        expect(logs.text).not.toContain(other.marker);
        for (const id of other.logIds) expectError(await reader.get(`/logs/${id}`), 404, 'not_found');
        expect((await reader.get(`/logs/${self.logIds[0]}`)).status).toBe(200);
        // Filters do not open a door either.
        const byKey = await reader.get(`/logs?api_key_id=${other.adminKeyId}`);
        expect(byKey.body.data).toEqual([]);
      }
      // Paging from another workspace's record is refused rather than leaking its position.
      expect((await self.admin.get(`/logs?after=${other.logIds[0]}`)).status).toBe(400);
    }
  });

  it('API keys: not listed, not readable, not changeable across workspaces', async () => {
    for (const [self, other] of pairs()) {
      const listed = await self.admin.get('/api-keys');
      const ids = listed.body.data.map((k: { id: string }) => k.id);
      expect(ids).toContain(self.adminKeyId);
      expect(ids).not.toContain(other.adminKeyId);
      for (const key of listed.body.data) expect(key.workspace_id).toBe(self.workspaceId);
      const path = `/api-keys/${other.adminKeyId}`;
      expectError(await self.admin.get(path), 404, 'not_found', 'id');
      expectError(await self.admin.patch(path, { role: 'member' }), 404, 'not_found', 'id');
      expectError(await self.admin.post(`${path}/revoke`), 404, 'not_found', 'id');
      expectError(await self.admin.delete(path), 404, 'not_found', 'id');
      // The other workspace's admin key is untouched.
      expect((await other.admin.get('/api-keys')).status).toBe(200);
    }
  });

  it('virtual keys and catalog providers: not listed, not readable, not usable across workspaces', async () => {
    for (const [self, other] of pairs()) {
      for (const [path, own, theirs] of [
        ['/virtual-keys', self.virtualKey, other.virtualKey],
        ['/providers', self.provider, other.provider],
      ] as const) {
        const listed = await self.admin.get(path);
        expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([own.id]);
        for (const address of [theirs.id, theirs.slug]) {
          expectError(await self.admin.get(`${path}/${address}`), 404, 'not_found', 'slug');
          expectError(await self.admin.patch(`${path}/${address}`, { name: 'x' }), 404, 'not_found', 'slug');
          expectError(await self.admin.delete(`${path}/${address}`), 404, 'not_found', 'slug');
        }
      }
      for (const headers of [
        { 'x-gateway-virtual-key': other.virtualKey.slug } as Record<string, string>,
        { 'x-gateway-virtual-key': other.virtualKey.id },
        { 'x-gateway-provider': `@${other.provider.slug}` },
      ]) {
        expectError(await chat(self.adminKey, self.marker, headers), 404, 'virtual_key_not_found');
      }
      // An inline config naming the other's virtual key fails the same way.
      const inline = JSON.stringify({ virtual_key: other.virtualKey.slug });
      expectError(
        await chat(self.adminKey, self.marker, { 'x-gateway-config': inline }),
        404,
        'virtual_key_not_found',
      );
    }
  });

  it('configs: not listed, not readable, not usable across workspaces', async () => {
    for (const [self, other] of pairs()) {
      const listed = await self.admin.get('/configs');
      expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([self.config.id]);
      for (const address of [other.config.id, other.config.slug]) {
        expectError(await self.admin.get(`/configs/${address}`), 404, 'not_found', 'id');
        expectError(await self.admin.get(`/configs/${address}/versions`), 404, 'not_found', 'id');
        expectError(await self.admin.patch(`/configs/${address}`, { name: 'x' }), 404, 'not_found', 'id');
        expectError(await self.admin.delete(`/configs/${address}`), 404, 'not_found', 'id');
        expectError(
          await chat(self.adminKey, self.marker, { 'x-gateway-config': address }),
          404,
          'config_not_found',
        );
      }
    }
  });

  it('no key, an unknown key, a revoked key and an expired key are 401', async () => {
    expectError(await call(gateway.url, undefined, 'GET', '/logs'), 401, 'missing_api_key');
    expectError(await call(gateway.url, 'gw-no-such-key-00000000', 'GET', '/logs'), 401, 'invalid_api_key');
    expectError(
      await chat('gw-no-such-key-00000000', a.marker, { 'x-gateway-virtual-key': a.virtualKey.slug }),
      401,
      'invalid_api_key',
    );

    for (const tenant of [a, b]) {
      const doomed = await tenant.admin.post('/api-keys', { name: 'doomed', role: 'admin' });
      const doomedClient = client(gateway.url, doomed.body.key);
      expect((await doomedClient.get('/api-keys')).status).toBe(200);
      await tenant.admin.post(`/api-keys/${doomed.body.id}/revoke`);
      expectError(await doomedClient.get('/api-keys'), 401, 'invalid_api_key');
      expectError(await doomedClient.get('/logs'), 401, 'invalid_api_key');
      expectError(
        await chat(doomed.body.key, tenant.marker, { 'x-gateway-virtual-key': tenant.virtualKey.slug }),
        401,
        'invalid_api_key',
      );
    }

    // Expiry needs no action: the key stays cached, and expiry is checked on every request.
    const expiresAt = Math.floor(Date.now() / 1000) + 2;
    const expiring = [];
    for (const tenant of [a, b]) {
      const created = await tenant.admin.post('/api-keys', {
        name: 'expiring',
        role: 'member',
        expires_at: expiresAt,
      });
      const expiringClient = client(gateway.url, created.body.key);
      expect((await expiringClient.get('/logs')).status).toBe(200);
      expiring.push(expiringClient);
    }
    await new Promise((resolve) => setTimeout(resolve, expiresAt * 1000 + 50 - Date.now()));
    for (const expiringClient of expiring)
      expectError(await expiringClient.get('/logs'), 401, 'invalid_api_key');
  });

  it('a member key: 403 on management, 200 on its own logs and on model calls', async () => {
    for (const tenant of [a, b]) {
      expectError(await tenant.member.get('/api-keys'), 403, 'forbidden');
      expectError(
        await tenant.member.post('/virtual-keys', { slug: 'm', provider: 'openai' }),
        403,
        'forbidden',
      );
      expectError(await tenant.member.get('/configs'), 403, 'forbidden');
      expectError(await tenant.member.post('/workspaces', { name: 'M', slug: 'm' }), 403, 'forbidden');
      expect((await tenant.member.get('/logs')).status).toBe(200);
      const reply = await chat(tenant.memberKey, tenant.marker, {
        'x-gateway-virtual-key': tenant.virtualKey.slug,
      });
      expect(reply.status, reply.text).toBe(200);
    }
  });
}

describe('tenancy (SQLite)', () => {
  tenancySuite(() => ({}));
});

describeWithPostgres('tenancy (PostgreSQL)', () => {
  const schema = freshSchemaName('tenancy');
  afterAll(async () => {
    await dropSchema(schema);
  });
  tenancySuite(() => ({ postgres: { url: postgresUrl(), schema } }));
});
