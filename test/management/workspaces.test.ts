import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

describe('/v1/workspaces', () => {
  it('creates a workspace with a first admin key that manages it', async () => {
    const created = await admin.post('/workspaces', { name: 'Research', slug: 'research' });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({
      object: 'workspace',
      id: expect.any(String),
      slug: 'research',
      name: 'Research',
      admin_key: { object: 'api_key', role: 'admin', status: 'active', key: expect.any(String) },
    });
    expect(created.body.admin_key.workspace_id).toBe(created.body.id);

    const own = client(gateway.url, created.body.admin_key.key);
    const keys = await own.get('/api-keys');
    expect(keys.status).toBe(200);
    expect(keys.body.data.map((k: { id: string }) => k.id)).toEqual([created.body.admin_key.id]);
    expect(keys.body.data[0]).not.toHaveProperty('key');

    // The organisation-level key lists the organisation's workspaces; the new workspace's key its own.
    const fromDefault = await admin.get('/workspaces');
    const fromNew = await own.get('/workspaces');
    expect(fromDefault.body.object).toBe('list');
    expect(fromDefault.body.data.map((w: { slug: string }) => w.slug)).toEqual(['default', 'research']);
    expect(fromNew.status, fromNew.text).toBe(200);
    expect(fromNew.body).toEqual({ object: 'list', data: [fromDefault.body.data[1]] });
    expect(fromDefault.body.data[1]).not.toHaveProperty('admin_key');
  });

  it("a workspace's own admin key may not create workspaces, nor see the organisation's others", async () => {
    const made = await admin.post('/workspaces', { name: 'Team', slug: 'team-scoped' });
    const team = client(gateway.url, made.body.admin_key.key);
    const error = expectError(
      await team.post('/workspaces', { name: 'Escape', slug: 'escape' }),
      403,
      'forbidden',
    );
    expect(error.message).toMatch(/organisation-level admin key/);
    const listed = await team.get('/workspaces');
    expect(listed.body.data.map((w: { slug: string }) => w.slug)).toEqual(['team-scoped']);
    // Nothing was created by the refused request.
    const all = await admin.get('/workspaces');
    expect(all.body.data.map((w: { slug: string }) => w.slug)).not.toContain('escape');
  });

  it.each([
    [{ slug: 'x' }, 'name'],
    [{ name: 'X' }, 'slug'],
    [{ name: 'X', slug: 'has space' }, 'slug'],
    [{ name: 'X', slug: 'x', organisation_id: 'org_other' }, 'organisation_id'],
  ])('refuses %j naming %s', async (body, param) => {
    expectError(await admin.post('/workspaces', body), 400, 'invalid_body', param);
  });

  it('a duplicate slug is 409', async () => {
    expect((await admin.post('/workspaces', { name: 'A', slug: 'dup-ws' })).status).toBe(200);
    expectError(await admin.post('/workspaces', { name: 'B', slug: 'dup-ws' }), 409, 'conflict', 'slug');
  });

  it('a workspace whose admin key cannot be stored is not created, and its slug stays free', async () => {
    // The database refuses the new workspace's first key: no workspace may be left that nobody can manage.
    const db = new Database(join(gateway.dataDir, 'gateway.db'));
    db.exec(`CREATE TRIGGER refuse_first_key BEFORE INSERT ON api_keys
      WHEN NEW.name = 'admin (workspace half-made)'
      BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
    try {
      const refused = await admin.post('/workspaces', { name: 'Half', slug: 'half-made' });
      expect(refused.status, refused.text).toBe(500);
      const all = await admin.get('/workspaces');
      expect(all.body.data.map((w: { slug: string }) => w.slug)).not.toContain('half-made');
    } finally {
      db.exec('DROP TRIGGER refuse_first_key');
      db.close();
    }
    const again = await admin.post('/workspaces', { name: 'Half', slug: 'half-made' });
    expect(again.status, again.text).toBe(200);
  });

  describe('DELETE /v1/workspaces/{id}', () => {
    it('deletes a workspace by slug or id: its keys stop working, and it leaves the list', async () => {
      const made = await admin.post('/workspaces', { name: 'Short', slug: 'short-lived' });
      const key = made.body.admin_key.key as string;
      const own = client(gateway.url, key);
      expect((await own.get('/api-keys/self')).status).toBe(200);
      const member = await own.post('/api-keys', { name: 'm', role: 'member' });
      expect(member.status, member.text).toBe(200);

      const deleted = await admin.delete('/workspaces/short-lived');
      expect(deleted.status, deleted.text).toBe(200);
      expect(deleted.body).toEqual({ object: 'workspace.deleted', id: made.body.id, deleted: true });
      expectError(await own.get('/api-keys/self'), 401, 'invalid_api_key');
      expectError(await client(gateway.url, member.body.key).get('/models'), 401, 'invalid_api_key');
      const listed = await admin.get('/workspaces');
      expect(listed.body.data.map((w: { id: string }) => w.id)).not.toContain(made.body.id);
      // Gone: deleting it again, by id or slug, finds nothing; naming it elsewhere finds nothing.
      expectError(await admin.delete(`/workspaces/${made.body.id}`), 404, 'not_found', 'workspace_id');
      expectError(await admin.delete('/workspaces/short-lived'), 404, 'not_found', 'workspace_id');
      expectError(
        await admin.get(`/policies/rate-limits?workspace_id=${made.body.id}`),
        404,
        'not_found',
        'workspace_id',
      );

      // Its slug may be used again.
      const again = await admin.post('/workspaces', { name: 'Again', slug: 'short-lived' });
      expect(again.status, again.text).toBe(200);
      expect(again.body.id).not.toBe(made.body.id);
      const byId = await admin.delete(`/workspaces/${again.body.id}`);
      expect(byId.status, byId.text).toBe(200);
    });

    it('never deletes the home workspace: 409 naming its id', async () => {
      const home = (await admin.get('/api-keys/self')).body.workspace;
      for (const named of ['default', home.id]) {
        const error = expectError(
          await admin.delete(`/workspaces/${named}`),
          409,
          'conflict',
          'workspace_id',
        );
        expect(error.message).toContain(home.id);
      }
      expect((await admin.get('/api-keys/self')).status).toBe(200);
    });

    it('takes an organisation-level admin key: a workspace admin may not delete even its own', async () => {
      const made = await admin.post('/workspaces', { name: 'Self', slug: 'self-delete' });
      const own = client(gateway.url, made.body.admin_key.key);
      const other = await admin.post('/workspaces', { name: 'Other', slug: 'other-ws' });
      for (const named of ['self-delete', 'other-ws', 'default', 'no-such-workspace']) {
        const error = expectError(await own.delete(`/workspaces/${named}`), 403, 'forbidden');
        expect(error.message).toMatch(/organisation-level admin key/);
      }
      expect((await own.get('/api-keys/self')).status).toBe(200);
      const listed = await admin.get('/workspaces');
      expect(listed.body.data.map((w: { id: string }) => w.id)).toEqual(
        expect.arrayContaining([made.body.id, other.body.id]),
      );
      expectError(await admin.delete('/workspaces/no-such-workspace'), 404, 'not_found', 'workspace_id');
    });
  });
});
