/**
 * Two gateway nodes on one PostgreSQL schema and one Redis prefix, whose lookup caches would keep a record
 * for ten minutes: a new version published through node A is what node B serves on the next call, as is a
 * new published partial, and a deleted prompt is gone from node B at once.
 */
import { expect, it } from 'vitest';
import { describeWithPostgres } from '../helpers/postgres.js';
import { describeWithRedis } from '../helpers/redis.js';
import { readUntil, twoNodesSharingStores } from '../helpers/two-nodes.js';
import { admin, chatTemplate, complete, fakeTarget, lastBody } from './support.js';

describeWithPostgres('prompts on two nodes (PostgreSQL)', () => {
  describeWithRedis('sharing PostgreSQL and Redis', () => {
    const nodes = twoNodesSharingStores('prompt-nodes');

    const systemSent = () => (lastBody(nodes.fake).messages as Array<{ content: string }>)[0].content;

    /** Calls node B until `until` holds for what the fake received, or the deadline passes. */
    const onBUntil = async (ref: string, until: (status: number) => boolean): Promise<number> =>
      (
        await readUntil(
          () => complete(nodes.b, ref, { variables: { q: 'x' } }),
          (reply) => until(reply.status),
        )
      ).status;

    it('a version published on node A is served by node B at once', async () => {
      const onA = admin(nodes.a);
      const base = { parameters: { model: 'gpt-4o-mini' }, config: fakeTarget(nodes.fake) };
      expect(
        (await onA.post('/prompts', { slug: 'shared', string: chatTemplate('v1', '{{q}}'), ...base })).status,
      ).toBe(200);
      // Node B loads version 1 into its cache.
      expect((await complete(nodes.b, 'shared', { variables: { q: 'x' } })).status).toBe(200);
      expect(systemSent()).toBe('v1');

      // A new version is not published: node B still serves version 1, and @latest serves version 2.
      expect(
        (await onA.put('/prompts/shared', { string: chatTemplate('v2', '{{q}}'), ...base })).status,
      ).toBe(200);
      await complete(nodes.b, 'shared', { variables: { q: 'x' } });
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
      const onA = admin(nodes.a);
      expect((await onA.post('/prompts/partials', { slug: 'voice', string: 'calm' })).status).toBe(200);
      const created = await onA.post('/prompts', {
        slug: 'voiced',
        string: chatTemplate('Be {{>voice}}.', '{{q}}'),
        parameters: { model: 'gpt-4o-mini' },
        config: fakeTarget(nodes.fake),
      });
      expect(created.status, created.text).toBe(200);
      await complete(nodes.b, 'voiced', { variables: { q: 'x' } });
      expect(systemSent()).toBe('Be calm.');
      expect((await onA.put('/prompts/partials/voice', { string: 'bold' })).status).toBe(200);
      expect((await onA.put('/prompts/partials/voice/publish', { version: 2 })).status).toBe(200);
      await onBUntil('voiced', () => systemSent() === 'Be bold.');
      expect(systemSent()).toBe('Be bold.');
    });
  });
});
