/**
 * Two gateway nodes on one PostgreSQL schema and one Redis prefix behave as one gateway: credentials made on
 * one node work on the other, a cached answer stored by one is served by the other, and a circuit opened
 * by one is open on the other.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { deploymentKeys, startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { startRedisProxy } from '../helpers/redis-proxy.js';
import { deleteRedisKeys, describeWithRedis, freshRedisPrefix, redisEnv } from '../helpers/redis.js';

describeWithPostgres('scale-out (PostgreSQL)', () => {
  describeWithRedis('two nodes sharing PostgreSQL and Redis', () => {
    const schema = freshSchemaName('scale_out');
    const prefix = freshRedisPrefix('scale-out');
    const env = {
      ...deploymentKeys('scale'),
      ...redisEnv(prefix),
    };
    let nodeA: TestGateway;
    let nodeB: TestGateway;
    let primary: FakeUpstream;
    let backup: FakeUpstream;

    beforeAll(async () => {
      primary = await startFakeOpenAI({ name: 'primary' });
      backup = await startFakeOpenAI({ name: 'backup' });
      nodeA = await startGateway({ env, postgres: { url: postgresUrl(), schema } });
      nodeB = await startGateway({ env, postgres: { url: postgresUrl(), schema } });
    });
    afterAll(async () => {
      await nodeA?.close();
      await nodeB?.close();
      await primary?.close();
      await backup?.close();
      await dropSchema(schema);
      await deleteRedisKeys(prefix);
    });

    const sdk = (node: TestGateway, headers: Record<string, string>) =>
      new OpenAI({
        baseURL: node.url,
        apiKey: 'sk-client',
        maxRetries: 0,
        defaultHeaders: { 'x-gateway-api-key': env.GATEWAY_ADMIN_KEY, ...headers },
      });
    /** Asks until the answer is a 401 or `ms` have passed; the last status. */
    async function statusWithin(ms: number, ask: () => Promise<Response>): Promise<number> {
      const deadline = Date.now() + ms;
      let status = (await ask()).status;
      while (status !== 401 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        status = (await ask()).status;
      }
      return status;
    }
    const ask = (client: OpenAI, content: string) =>
      client.chat.completions
        .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] })
        .withResponse();

    it('a virtual key created on one node works on the other', async () => {
      const created = await fetch(`${nodeA.url}/virtual-keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': env.GATEWAY_ADMIN_KEY },
        body: JSON.stringify({
          slug: 'shared-vk',
          name: 'shared',
          provider: 'openai',
          api_key: 'sk-shared-virtual-key',
          custom_host: primary.url,
        }),
      });
      expect(created.status).toBe(200);
      const { data } = await ask(sdk(nodeB, { 'x-gateway-virtual-key': 'shared-vk' }), 'via node B');
      expect(data.choices[0].message.content).toBe('[primary] via node B');
      expect(primary.requests.at(-1)?.headers.authorization).toBe('Bearer sk-shared-virtual-key');
    });

    it('a key revoked on one node stops working on the other at once', async () => {
      const adminHeaders = { 'content-type': 'application/json', 'x-gateway-api-key': env.GATEWAY_ADMIN_KEY };
      const created = await fetch(`${nodeA.url}/api-keys`, {
        method: 'POST',
        headers: adminHeaders,
        body: JSON.stringify({ name: 'short-lived', role: 'member' }),
      });
      const createdBody = (await created.json()) as { id: string; key: string };
      expect(created.status, JSON.stringify(createdBody)).toBe(200);
      const { id, key } = createdBody;
      const logsOnB = () => fetch(`${nodeB.url}/logs?limit=1`, { headers: { 'x-gateway-api-key': key } });
      // Node B now holds the key in its in-memory cache.
      expect((await logsOnB()).status).toBe(200);
      const revoked = await fetch(`${nodeA.url}/api-keys/${id}/revoke`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': env.GATEWAY_ADMIN_KEY },
      });
      expect(revoked.status).toBe(200);
      // The invalidation travels through Redis; well within a second, not the 30 s cache lifetime.
      expect(await statusWithin(1_000, logsOnB)).toBe(401);
    });

    it('a node cut from Redis while a key was revoked forgets its cached keys once it is back', async () => {
      const proxy = await startRedisProxy();
      const nodeC = await startGateway({
        env: { ...env, REDIS_URL: proxy.url },
        postgres: { url: postgresUrl(), schema },
      });
      try {
        const adminHeaders = {
          'content-type': 'application/json',
          'x-gateway-api-key': env.GATEWAY_ADMIN_KEY,
        };
        const created = await fetch(`${nodeA.url}/api-keys`, {
          method: 'POST',
          headers: adminHeaders,
          body: JSON.stringify({ name: 'revoked-while-away', role: 'member' }),
        });
        const { id, key } = (await created.json()) as { id: string; key: string };
        const logsOnC = () => fetch(`${nodeC.url}/logs?limit=1`, { headers: { 'x-gateway-api-key': key } });
        expect((await logsOnC()).status).toBe(200);

        // Node C is away while the revocation is published: it never hears of it.
        proxy.set('refuse');
        const revoked = await fetch(`${nodeA.url}/api-keys/${id}/revoke`, {
          method: 'POST',
          headers: { 'x-gateway-api-key': env.GATEWAY_ADMIN_KEY },
        });
        expect(revoked.status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 100));
        proxy.set('pass');

        // Subscribed again, it drops what it may have missed: well before the 30 s cache lifetime.
        expect(await statusWithin(5_000, logsOnC)).toBe(401);
      } finally {
        await nodeC.close();
        await proxy.close();
      }
    });

    it('a key rotated on one node: its old value stops working on the other at once, its new one works', async () => {
      const adminHeaders = { 'content-type': 'application/json', 'x-gateway-api-key': env.GATEWAY_ADMIN_KEY };
      const created = await fetch(`${nodeA.url}/api-keys`, {
        method: 'POST',
        headers: adminHeaders,
        body: JSON.stringify({ name: 'rotated', role: 'member' }),
      });
      const { id, key } = (await created.json()) as { id: string; key: string };
      const logsOnB = (value: string) =>
        fetch(`${nodeB.url}/logs?limit=1`, { headers: { 'x-gateway-api-key': value } });
      expect((await logsOnB(key)).status).toBe(200);
      const rotated = await fetch(`${nodeA.url}/api-keys/${id}/rotate`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': env.GATEWAY_ADMIN_KEY },
      });
      expect(rotated.status).toBe(200);
      const { key: fresh } = (await rotated.json()) as { key: string };
      expect(await statusWithin(1_000, () => logsOnB(key))).toBe(401);
      expect((await logsOnB(fresh)).status).toBe(200);
    });

    it('an answer cached by one node is served by the other', async () => {
      const config = JSON.stringify({
        provider: 'openai',
        api_key: 'sk-cache',
        custom_host: primary.url,
        cache: { mode: 'simple', max_age: 60 },
      });
      const before = primary.requests.length;
      const first = await ask(sdk(nodeA, { 'x-gateway-config': config }), 'cache me across nodes');
      expect(first.response.headers.get('x-gateway-cache-status')).toBe('MISS');
      const second = await ask(sdk(nodeB, { 'x-gateway-config': config }), 'cache me across nodes');
      expect(second.response.headers.get('x-gateway-cache-status')).toBe('HIT');
      expect(second.data.choices[0].message.content).toBe(first.data.choices[0].message.content);
      expect(primary.requests.length).toBe(before + 1);
    });

    it('a circuit opened by one node is open on the other', async () => {
      const down = await startFakeOpenAI({ name: 'down', defaultBehaviour: { status: 503 } });
      try {
        const config = JSON.stringify({
          strategy: { mode: 'fallback' },
          targets: [
            {
              provider: 'openai',
              api_key: 'sk-down',
              custom_host: down.url,
              cb_config: { failure_threshold: 1, cooldown_interval: 30_000 },
            },
            { provider: 'openai', api_key: 'sk-backup', custom_host: backup.url },
          ],
        });
        const onA = await ask(sdk(nodeA, { 'x-gateway-config': config }), 'breaker');
        expect(onA.data.choices[0].message.content).toBe('[backup] breaker');
        expect(down.requests.length).toBe(1);
        const onB = await ask(sdk(nodeB, { 'x-gateway-config': config }), 'breaker');
        expect(onB.data.choices[0].message.content).toBe('[backup] breaker');
        expect(onB.response.headers.get('x-gateway-last-used-option-index')).toBe('targets[1]');
        // Node B never called the target whose circuit node A opened.
        expect(down.requests.length).toBe(1);
      } finally {
        await down.close();
      }
    });
  });
});
