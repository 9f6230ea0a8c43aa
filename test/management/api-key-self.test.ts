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

describe('GET /v1/api-keys/self', () => {
  it("tells any key its own record, role, workspace and scope, never a key's value", async () => {
    const member = await admin.post('/api-keys', { name: 'reader', role: 'member', metadata: { team: 'a' } });
    const own = await client(gateway.url, member.body.key).get('/api-keys/self');
    expect(own.status, own.text).toBe(200);
    // last_used_at is written in the background: whatever it is, the rest is the record as created.
    const { key: _value, last_used_at: _used, ...record } = member.body;
    expect(own.body).toMatchObject(record);
    expect(own.body.workspace).toMatchObject({
      object: 'workspace',
      slug: 'default',
      id: record.workspace_id,
    });
    expect(own.body.scope).toBe('workspace');
    expect(own.text).not.toContain(member.body.key);
    expect(own.body).not.toHaveProperty('key');

    const home = await admin.get('/api-keys/self');
    expect(home.body).toMatchObject({ object: 'api_key', role: 'admin', scope: 'organisation' });
    expect(home.text).not.toContain(gateway.adminKey);

    const made = await admin.post('/workspaces', { name: 'Team', slug: 'team' });
    const team = await client(gateway.url, made.body.admin_key.key).get('/api-keys/self');
    expect(team.body).toMatchObject({
      id: made.body.admin_key.id,
      role: 'admin',
      scope: 'workspace',
      workspace: { id: made.body.id, slug: 'team', name: 'Team' },
    });
  });

  it('is 401 without a key, and for a revoked key', async () => {
    expectError(await client(gateway.url, undefined).get('/api-keys/self'), 401, 'missing_api_key');
    const made = await admin.post('/api-keys', { name: 'short', role: 'member' });
    await admin.post(`/api-keys/${made.body.id}/revoke`);
    expectError(await client(gateway.url, made.body.key).get('/api-keys/self'), 401, 'invalid_api_key');
  });

  it('is in the OpenAPI document', async () => {
    const doc = await client(gateway.url, undefined).get('/openapi.json');
    expect(doc.body.paths['/v1/api-keys/self']?.get).toBeDefined();
  });
});
