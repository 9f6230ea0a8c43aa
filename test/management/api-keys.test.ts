import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, expectError, type Client } from './http.js';

let gateway: TestGateway;
let admin: Client;

beforeAll(async () => {
  gateway = await startGateway();
  admin = client(gateway.url, gateway.adminKey);
});

afterAll(async () => {
  await gateway?.close();
});

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('POST /v1/api-keys', () => {
  it('creates a key, shows its value once, and the value works', async () => {
    const expiresAt = nowSeconds() + 3600;
    const created = await admin.post('/api-keys', {
      name: 'ci',
      role: 'member',
      expires_at: expiresAt,
      metadata: { team: 'search' },
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({
      object: 'api_key',
      id: expect.stringMatching(/\S/),
      name: 'ci',
      role: 'member',
      status: 'active',
      expires_at: expiresAt,
      metadata: { team: 'search' },
      key: expect.stringMatching(/^\S{16,}$/),
    });
    expect(created.body.key).toContain(created.body.key_prefix);

    const fetched = await admin.get(`/api-keys/${created.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).not.toHaveProperty('key');
    expect(fetched.text).not.toContain(created.body.key);

    const listed = await admin.get('/api-keys');
    expect(listed.body.object).toBe('list');
    expect(listed.body.data.map((k: { id: string }) => k.id)).toContain(created.body.id);
    expect(listed.text).not.toContain(created.body.key);

    expect(fetched.body.last_used_at).toBeNull();
    const before = nowSeconds();
    const asMember = await client(gateway.url, created.body.key).get('/logs');
    expect(asMember.status).toBe(200);
    // Its use is written in the background.
    await vi.waitFor(async () => {
      const used = (await admin.get(`/api-keys/${created.body.id}`)).body.last_used_at;
      expect(used).toBeGreaterThanOrEqual(before);
    });
  });

  it.each([
    [{ role: 'admin' }, 'name'],
    [{ name: 'x' }, 'role'],
    [{ name: 'x', role: 'owner' }, 'role'],
    [{ name: '', role: 'admin' }, 'name'],
    [{ name: 'x', role: 'admin', expires_at: 'tomorrow' }, 'expires_at'],
    [{ name: 'x', role: 'admin', expires_at: 1.5 }, 'expires_at'],
    [{ name: 'x', role: 'admin', expires_at: 1000 }, 'expires_at'],
    [{ name: 'x', role: 'admin', metadata: { a: 1 } }, 'metadata.a'],
    [{ name: 'x', role: 'admin', metadata: { ['k'.repeat(65)]: 'v' } }, `metadata.${'k'.repeat(65)}`],
    [{ name: 'x', role: 'admin', metadata: { a: 'v'.repeat(513) } }, 'metadata.a'],
    [{ name: 'x', role: 'admin', scopes: ['all'] }, 'scopes'],
  ])('refuses %j naming %s', async (body, param) => {
    expectError(await admin.post('/api-keys', body), 400, 'invalid_body', param);
  });

  it('refuses more than 16 metadata pairs, a body that is not an object, and bad JSON', async () => {
    const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    expectError(
      await admin.post('/api-keys', { name: 'x', role: 'admin', metadata }),
      400,
      'invalid_body',
      'metadata',
    );
    expectError(await admin.post('/api-keys', ['x']), 400, 'invalid_body', null);
    const raw = await fetch(`${gateway.url}/api-keys`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json' },
      body: '{"name":',
    });
    expect(raw.status).toBe(400);
    expect(((await raw.json()) as { error: { code: string } }).error.code).toBe('invalid_json');
  });
});

describe('PATCH, revoke and DELETE /v1/api-keys/{id}', () => {
  it('updates name, role, metadata and expiry; an empty patch is refused', async () => {
    const { body: key } = await admin.post('/api-keys', { name: 'before', role: 'member' });
    const patched = await admin.patch(`/api-keys/${key.id}`, {
      name: 'after',
      role: 'admin',
      metadata: { env: 'prod' },
      expires_at: null,
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({
      id: key.id,
      name: 'after',
      role: 'admin',
      metadata: { env: 'prod' },
    });
    expect(patched.body).not.toHaveProperty('key');
    // The promotion takes effect on the next request.
    expect((await client(gateway.url, key.key).get('/api-keys')).status).toBe(200);

    expectError(await admin.patch(`/api-keys/${key.id}`, {}), 400, 'invalid_body', null);
    expectError(await admin.patch(`/api-keys/${key.id}`, { role: 'root' }), 400, 'invalid_body', 'role');
    expectError(
      await admin.patch(`/api-keys/${key.id}`, { status: 'active' }),
      400,
      'invalid_body',
      'status',
    );
  });

  it('demoting a key to member takes its admin rights away at once', async () => {
    const { body: key } = await admin.post('/api-keys', { name: 'demote-me', role: 'admin' });
    const own = client(gateway.url, key.key);
    expect((await own.get('/api-keys')).status).toBe(200);
    await admin.patch(`/api-keys/${key.id}`, { role: 'member' });
    expectError(await own.get('/api-keys'), 403, 'forbidden');
  });

  it('a past expires_at expires the key at once', async () => {
    const { body: key } = await admin.post('/api-keys', { name: 'expire-me', role: 'member' });
    const own = client(gateway.url, key.key);
    expect((await own.get('/logs')).status).toBe(200);
    await admin.patch(`/api-keys/${key.id}`, { expires_at: nowSeconds() - 1 });
    expectError(await own.get('/logs'), 401, 'invalid_api_key');
  });

  it('revokes a key: the key stops working at once and shows as revoked', async () => {
    const { body: key } = await admin.post('/api-keys', { name: 'revoke-me', role: 'member' });
    const own = client(gateway.url, key.key);
    expect((await own.get('/logs')).status).toBe(200);
    const revoked = await admin.post(`/api-keys/${key.id}/revoke`);
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toMatchObject({ id: key.id, status: 'revoked' });
    expectError(await own.get('/logs'), 401, 'invalid_api_key');
    expect((await admin.get(`/api-keys/${key.id}`)).body.status).toBe('revoked');
  });

  it('rotates a key: a new value for the same key, the old value stops working at once', async () => {
    const { body: key } = await admin.post('/api-keys', {
      name: 'rotate-me',
      role: 'member',
      metadata: { team: 'search' },
    });
    const old = client(gateway.url, key.key);
    expect((await old.get('/logs')).status).toBe(200);
    const rotated = await admin.post(`/api-keys/${key.id}/rotate`);
    expect(rotated.status, rotated.text).toBe(200);
    // The same key (id, role, metadata: what policies and logs know it by), with a new value shown once.
    expect(rotated.body).toMatchObject({
      object: 'api_key',
      id: key.id,
      name: 'rotate-me',
      role: 'member',
      status: 'active',
      metadata: { team: 'search' },
    });
    expect(rotated.body.key).toMatch(/^gw-[A-Za-z0-9_-]{43}$/);
    expect(rotated.body.key).not.toBe(key.key);
    expect(rotated.body.key_prefix).toBe(rotated.body.key.slice(3, 11));
    expectError(await old.get('/logs'), 401, 'invalid_api_key');
    expect((await client(gateway.url, rotated.body.key).get('/logs')).status).toBe(200);
    expect((await admin.get(`/api-keys/${key.id}`)).body).not.toHaveProperty('key');

    // A key may rotate itself (its new value is in the answer); a revoked key stays revoked.
    const { body: self } = await admin.post('/api-keys', { name: 'self-rotate', role: 'admin' });
    const selfRotated = await client(gateway.url, self.key).post(`/api-keys/${self.id}/rotate`);
    expect(selfRotated.status, selfRotated.text).toBe(200);
    expect((await client(gateway.url, selfRotated.body.key).get('/api-keys')).status).toBe(200);
    await admin.post(`/api-keys/${key.id}/revoke`);
    expectError(await admin.post(`/api-keys/${key.id}/rotate`), 409, 'conflict', 'id');
    expectError(await admin.post('/api-keys/key_missing/rotate'), 404, 'not_found', 'id');
  });

  it('deletes a key: it stops working and is gone', async () => {
    const { body: key } = await admin.post('/api-keys', { name: 'delete-me', role: 'member' });
    const own = client(gateway.url, key.key);
    expect((await own.get('/logs')).status).toBe(200);
    const deleted = await admin.delete(`/api-keys/${key.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ object: 'api_key.deleted', id: key.id, deleted: true });
    expectError(await own.get('/logs'), 401, 'invalid_api_key');
    expectError(await admin.get(`/api-keys/${key.id}`), 404, 'not_found', 'id');
    expectError(await admin.delete(`/api-keys/${key.id}`), 404, 'not_found', 'id');
  });

  it('a key cannot revoke, delete or demote itself', async () => {
    const { body: key } = await admin.post('/api-keys', { name: 'self', role: 'admin' });
    const own = client(gateway.url, key.key);
    expectError(await own.post(`/api-keys/${key.id}/revoke`), 409, 'conflict', 'id');
    expectError(await own.delete(`/api-keys/${key.id}`), 409, 'conflict', 'id');
    expectError(await own.patch(`/api-keys/${key.id}`, { role: 'member' }), 409, 'conflict', 'id');
    // Renaming itself is fine.
    expect((await own.patch(`/api-keys/${key.id}`, { name: 'renamed' })).status).toBe(200);
    expect((await own.get('/api-keys')).status).toBe(200);
  });

  it('a key cannot expire itself now, which is a revocation by another name', async () => {
    const { body: key } = await admin.post('/api-keys', { name: 'self-expiry', role: 'admin' });
    const own = client(gateway.url, key.key);
    for (const expires_at of [0, nowSeconds() - 60, nowSeconds()]) {
      expectError(await own.patch(`/api-keys/${key.id}`, { expires_at }), 409, 'conflict', 'id');
    }
    expect((await own.get('/api-keys')).status).toBe(200);
    // A later expiry of its own, or none, is planning, not a lock-out; another admin key may expire it now.
    expect((await own.patch(`/api-keys/${key.id}`, { expires_at: nowSeconds() + 3600 })).status).toBe(200);
    expect((await own.patch(`/api-keys/${key.id}`, { expires_at: null })).status).toBe(200);
    expect((await admin.patch(`/api-keys/${key.id}`, { expires_at: nowSeconds() - 1 })).status).toBe(200);
    expectError(await own.get('/api-keys'), 401, 'invalid_api_key');
  });

  it('404 names the id for every route of a missing key', async () => {
    const missing = 'key_does_not_exist';
    for (const reply of [
      await admin.get(`/api-keys/${missing}`),
      await admin.patch(`/api-keys/${missing}`, { name: 'x' }),
      await admin.post(`/api-keys/${missing}/revoke`),
      await admin.delete(`/api-keys/${missing}`),
    ]) {
      const error = expectError(reply, 404, 'not_found', 'id');
      expect(error.message).toContain(missing);
    }
  });
});

describe('key_prefix of a value the operator chose (GATEWAY_ADMIN_KEY)', () => {
  it('shows at most a quarter of it', async () => {
    const chosen = 'Tr0ub4dor-and-3x'; // 16 characters, the shortest allowed
    const own = await startGateway({ env: { GATEWAY_ADMIN_KEY: chosen } });
    try {
      const listed = await client(own.url, chosen).get('/api-keys');
      expect(listed.status, listed.text).toBe(200);
      const record = listed.body.data.find((k: { name: string }) => k.name.includes('GATEWAY_ADMIN_KEY'));
      expect(record.key_prefix).toBe('Tr0u');
      expect(listed.text).not.toContain('Tr0ub4do');
    } finally {
      await own.close();
    }
  });
});

describe('the key GATEWAY_ADMIN_KEY sets', () => {
  it('cannot be rotated, revoked, deleted, demoted or given an expiry: the setting owns it', async () => {
    const { body: settingsKey } = await admin.get('/api-keys/self');
    expect(settingsKey.name).toContain('GATEWAY_ADMIN_KEY');
    const { body: other } = await admin.post('/api-keys', { name: 'other-admin', role: 'admin' });
    for (const caller of [client(gateway.url, other.key), admin]) {
      for (const reply of [
        await caller.post(`/api-keys/${settingsKey.id}/rotate`),
        await caller.post(`/api-keys/${settingsKey.id}/revoke`),
        await caller.delete(`/api-keys/${settingsKey.id}`),
        await caller.patch(`/api-keys/${settingsKey.id}`, { role: 'member' }),
        await caller.patch(`/api-keys/${settingsKey.id}`, { expires_at: nowSeconds() + 3600 }),
      ]) {
        const error = expectError(reply, 409, 'conflict', 'id');
        expect(error.message).toContain('GATEWAY_ADMIN_KEY');
      }
    }
    // To another workspace's admin key it is an unknown id, as any key of this workspace is.
    const made = await admin.post('/workspaces', { name: 'Elsewhere', slug: 'elsewhere-settings-key' });
    const elsewhere = client(gateway.url, made.body.admin_key.key);
    expectError(await elsewhere.post(`/api-keys/${settingsKey.id}/rotate`), 404, 'not_found', 'id');
    expectError(await elsewhere.delete(`/api-keys/${settingsKey.id}`), 404, 'not_found', 'id');
    // The setting's value still works, unchanged; renaming the key and its metadata are the key's own.
    const after = await admin.get(`/api-keys/${settingsKey.id}`);
    expect(after.body).toMatchObject({ status: 'active', role: 'admin', expires_at: null });
    expect(after.body.key_prefix).toBe(settingsKey.key_prefix);
    const renamed = await admin.patch(`/api-keys/${settingsKey.id}`, {
      name: 'ops admin',
      metadata: { a: 'b' },
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect((await admin.get('/api-keys')).status).toBe(200);
  });

  it('is replaced by changing the setting: the key with the old value is then an ordinary key', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-admin-key-'));
    const env = { GATEWAY_DATA_DIR: dataDir, GATEWAY_MASTER_KEY: randomBytes(32).toString('hex') };
    const oldValue = `gw-old-${randomBytes(12).toString('hex')}`;
    const newValue = `gw-new-${randomBytes(12).toString('hex')}`;
    try {
      const first = await startGateway({ env: { ...env, GATEWAY_ADMIN_KEY: oldValue } });
      const oldKey = (await client(first.url, oldValue).get('/api-keys/self')).body;
      await first.close();
      const second = await startGateway({ env: { ...env, GATEWAY_ADMIN_KEY: newValue } });
      try {
        const current = client(second.url, newValue);
        expect((await current.get('/api-keys')).status).toBe(200);
        expectError(
          await current.post(`/api-keys/${(await current.get('/api-keys/self')).body.id}/rotate`),
          409,
          'conflict',
          'id',
        );
        const revoked = await current.post(`/api-keys/${oldKey.id}/revoke`);
        expect(revoked.status, revoked.text).toBe(200);
        expectError(await client(second.url, oldValue).get('/api-keys'), 401, 'invalid_api_key');
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
