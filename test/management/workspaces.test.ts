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
});
