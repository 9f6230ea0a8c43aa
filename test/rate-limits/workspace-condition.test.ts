/**
 * A policy whose `workspace_id` condition names another workspace, created with the organisation-level
 * admin key and no body `workspace_id` (the interface's own example): it is stored in the workspace the
 * condition names, and so governs that workspace's calls.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call, client, type Client } from '../management/http.js';
import { target } from '../routing/support.js';

const PATH = '/policies/rate-limits';

describe('a workspace_id condition naming another workspace', () => {
  let gateway: TestGateway;
  let fake: FakeUpstream;
  let admin: Client;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'limits-workspace-condition' });
    gateway = await startGateway({ rateLimitClock: () => Date.UTC(2030, 0, 1) });
    admin = client(gateway.url, gateway.adminKey);
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const workspace = async (slug: string) => {
    const made = await admin.post('/workspaces', { name: slug, slug });
    expect(made.status, made.text).toBe(200);
    return made.body as { id: string; admin_key: { key: string } };
  };
  const chat = (key: string) =>
    call(
      gateway.url,
      key,
      'POST',
      '/chat/completions',
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      { 'x-gateway-config': JSON.stringify(target(fake)) },
    );

  for (const by of ['id', 'slug'] as const) {
    it(`limits the calls of the workspace the condition names by its ${by}`, async () => {
      const other = await workspace(`limited-by-${by}`);
      const created = await admin.post(PATH, {
        conditions: [{ key: 'workspace_id', value: by === 'id' ? other.id : `limited-by-${by}` }],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 1,
      });
      expect(created.status, created.text).toBe(200);

      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await chat(other.admin_key.key)).status);
      expect(statuses).toEqual([200, 429, 429]);
      // The caller's own workspace is not governed by it.
      for (let i = 0; i < 3; i++) expect((await chat(gateway.adminKey)).status).toBe(200);

      const read = await admin.get(`${PATH}/${created.body.id as string}?workspace_id=${other.id}`);
      expect(read.status, read.text).toBe(200);
      expect(read.body).toMatchObject({
        workspace_id: other.id,
        conditions: [{ key: 'workspace_id', value: other.id }],
      });
    });
  }
});
