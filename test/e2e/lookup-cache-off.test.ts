/**
 * Two gateway nodes on one PostgreSQL schema without Redis, with the lookup cache turned off
 * (`GATEWAY_LOOKUP_CACHE_TTL_MS=0`): a change made through one node governs the other's very next call,
 * since neither keeps what it read.
 */
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { deploymentKeys, startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { client } from '../management/http.js';
import { target } from '../routing/support.js';

describeWithPostgres('two nodes without Redis, lookup cache off (PostgreSQL)', () => {
  const schema = freshSchemaName('lookup_cache_off');
  const env = {
    ...deploymentKeys('nocache'),
    GATEWAY_LOOKUP_CACHE_TTL_MS: '0',
  };
  let nodeA: TestGateway;
  let nodeB: TestGateway;
  let fake: FakeUpstream;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'lookup-cache-off' });
    nodeA = await startGateway({ env, postgres: { url: postgresUrl(), schema } });
    nodeB = await startGateway({ env, postgres: { url: postgresUrl(), schema } });
  });
  afterAll(async () => {
    await nodeA?.close();
    await nodeB?.close();
    await fake?.close();
    await dropSchema(schema);
  });

  const chatOn = (node: TestGateway, key: string) =>
    new OpenAI({
      baseURL: node.url,
      apiKey: 'sk-client',
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': key, 'x-gateway-config': JSON.stringify(target(fake)) },
    }).chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => 200,
        (error: unknown) => (error as APIError).status,
      );

  it('a rate-limit policy created on one node governs the next call on the other', async () => {
    const admin = client(nodeA.url, env.GATEWAY_ADMIN_KEY);
    const member = await admin.post('/api-keys', { name: 'limited', role: 'member' });
    expect(member.status, member.text).toBe(200);
    const key = member.body.key as string;
    // Node B has read the workspace's policies (none) and the key.
    expect(await chatOn(nodeB, key)).toBe(200);
    const created = await admin.post('/policies/rate-limits', {
      conditions: [{ key: 'api_key', value: member.body.id }],
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpd',
      value: 1,
    });
    expect(created.status, created.text).toBe(200);
    expect(await chatOn(nodeB, key)).toBe(200);
    expect(await chatOn(nodeB, key)).toBe(429);
  });

  it('a key revoked on one node is refused by the other at once', async () => {
    const admin = client(nodeA.url, env.GATEWAY_ADMIN_KEY);
    const member = await admin.post('/api-keys', { name: 'revoked', role: 'member' });
    const key = member.body.key as string;
    expect(await chatOn(nodeB, key)).toBe(200);
    expect((await admin.post(`/api-keys/${member.body.id}/revoke`)).status).toBe(200);
    expect(await chatOn(nodeB, key)).toBe(401);
  });
});
