/**
 * Two gateway nodes on one PostgreSQL schema and one Redis prefix, whose lookup caches would keep a record
 * for ten minutes: a new version published through node A is what node B serves on the next call, as is a
 * new published partial, and a deleted prompt is gone from node B at once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { deploymentKeys, startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { deleteRedisKeys, describeWithRedis, freshRedisPrefix, redisEnv } from '../helpers/redis.js';
import { admin, chatTemplate, complete, fakeTarget, lastBody } from './support.js';

/** How long the invalidation may take to cross Redis: generous for a loaded machine, far below the TTL. */
const PROPAGATION_DEADLINE_MS = 5_000;

describeWithPostgres('prompts on two nodes (PostgreSQL)', () => {
  describeWithRedis('sharing PostgreSQL and Redis', () => {
    const schema = freshSchemaName('prompt_nodes');
    const prefix = freshRedisPrefix('prompt-nodes');
    const env = {
      ...deploymentKeys('nodes'),
      ...redisEnv(prefix),
      GATEWAY_LOOKUP_CACHE_TTL_MS: String(10 * 60_000),
    };
    let nodeA: TestGateway;
    let nodeB: TestGateway;
    const adminKey = env.GATEWAY_ADMIN_KEY;
    let fake: FakeUpstream;

    beforeAll(async () => {
      fake = await startFakeOpenAI({ name: 'prompt-nodes' });
      nodeA = await startGateway({ env, postgres: { url: postgresUrl(), schema } });
      nodeB = await startGateway({ env, postgres: { url: postgresUrl(), schema } });
      // Both nodes take the same admin key from the environment.
      nodeA.adminKey = adminKey;
      nodeB.adminKey = adminKey;
    });
    afterAll(async () => {
      await fake?.close();
      await nodeA?.close();
      await nodeB?.close();
      await dropSchema(schema);
      await deleteRedisKeys(prefix);
    });

    const systemSent = () => (lastBody(fake).messages as Array<{ content: string }>)[0].content;

    /** Calls node B until `until` holds for what the fake received, or the deadline passes. */
    async function onBUntil(ref: string, until: (status: number) => boolean): Promise<number> {
      const deadline = Date.now() + PROPAGATION_DEADLINE_MS;
      let reply = await complete(nodeB, ref, { variables: { q: 'x' } });
      while (!until(reply.status) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        reply = await complete(nodeB, ref, { variables: { q: 'x' } });
      }
      return reply.status;
    }

    it('a version published on node A is served by node B at once', async () => {
      const onA = admin(nodeA);
      const base = { parameters: { model: 'gpt-4o-mini' }, config: fakeTarget(fake) };
      expect(
        (await onA.post('/prompts', { slug: 'shared', string: chatTemplate('v1', '{{q}}'), ...base })).status,
      ).toBe(200);
      // Node B loads version 1 into its cache.
      expect((await complete(nodeB, 'shared', { variables: { q: 'x' } })).status).toBe(200);
      expect(systemSent()).toBe('v1');

      // A new version is not published: node B still serves version 1, and @latest serves version 2.
      expect(
        (await onA.put('/prompts/shared', { string: chatTemplate('v2', '{{q}}'), ...base })).status,
      ).toBe(200);
      await complete(nodeB, 'shared', { variables: { q: 'x' } });
      expect(systemSent()).toBe('v1');
      await onBUntil('shared@latest', () => systemSent() === 'v2');
      expect(systemSent()).toBe('v2');

      expect((await onA.put('/prompts/shared/publish', { version: 2 })).status).toBe(200);
      await onBUntil('shared', () => systemSent() === 'v2');
      expect(systemSent()).toBe('v2');

      expect((await onA.delete('/prompts/shared')).status).toBe(200);
      expect(await onBUntil('shared', (status) => status === 404)).toBe(404);
    });

    it('a partial published on node A is what node B includes next', async () => {
      const onA = admin(nodeA);
      expect((await onA.post('/prompts/partials', { slug: 'voice', string: 'calm' })).status).toBe(200);
      const created = await onA.post('/prompts', {
        slug: 'voiced',
        string: chatTemplate('Be {{>voice}}.', '{{q}}'),
        parameters: { model: 'gpt-4o-mini' },
        config: fakeTarget(fake),
      });
      expect(created.status, created.text).toBe(200);
      await complete(nodeB, 'voiced', { variables: { q: 'x' } });
      expect(systemSent()).toBe('Be calm.');
      expect((await onA.put('/prompts/partials/voice', { string: 'bold' })).status).toBe(200);
      expect((await onA.put('/prompts/partials/voice/publish', { version: 2 })).status).toBe(200);
      await onBUntil('voiced', () => systemSent() === 'Be bold.');
      expect(systemSent()).toBe('Be bold.');
    });
  });
});
