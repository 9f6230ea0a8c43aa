/**
 * Two gateway nodes on one PostgreSQL schema and one Redis prefix, with lookup caches that would keep a
 * key or a config for ten minutes: a workspace deleted through one node is unusable at once on the other —
 * its key, which the other node holds in its cache, is refused, and its config is no longer found — while
 * another workspace's key and config go on working there.
 */
import { beforeAll, expect, it } from 'vitest';
import { describeWithPostgres } from '../helpers/postgres.js';
import { describeWithRedis } from '../helpers/redis.js';
import { readUntil, twoNodesSharingStores } from '../helpers/two-nodes.js';
import { call, client, type Client } from './http.js';

describeWithPostgres('a workspace deleted on one of two nodes (PostgreSQL)', () => {
  describeWithRedis('sharing PostgreSQL and Redis', () => {
    const nodes = twoNodesSharingStores('ws-delete-nodes');
    let onA: Client;

    beforeAll(() => {
      onA = client(nodes.a.url, nodes.env.GATEWAY_ADMIN_KEY);
    });

    const chatOnB = (key: string, config: string) =>
      call(
        nodes.b.url,
        key,
        'POST',
        '/chat/completions',
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] },
        { 'x-gateway-config': config },
      );

    /** A workspace with its admin key and a stored config `cfg` that calls the fake provider. */
    async function workspace(slug: string): Promise<{ id: string; key: string }> {
      const made = await onA.post('/workspaces', { name: slug, slug });
      expect(made.status, made.text).toBe(200);
      const key = made.body.admin_key.key as string;
      const config = await client(nodes.a.url, key).post('/configs', {
        slug: 'cfg',
        config: { provider: 'openai', api_key: `sk-${slug}`, custom_host: nodes.fake.url },
      });
      expect(config.status, config.text).toBe(200);
      return { id: made.body.id as string, key };
    }

    it('its key, config and listing are gone on the other node at once; the other workspace works on', async () => {
      const doomed = await workspace('doomed');
      const kept = await workspace('kept');
      // Node B holds both keys and both configs in its caches.
      expect((await chatOnB(doomed.key, 'cfg')).status).toBe(200);
      expect((await chatOnB(kept.key, 'cfg')).status).toBe(200);
      expect(nodes.b.server.deps.lookups.cachedApiKey(doomed.key)).toMatchObject({ workspace_id: doomed.id });

      const deleted = await onA.delete('/workspaces/doomed');
      expect(deleted.status, deleted.text).toBe(200);
      expect(deleted.body).toEqual({ object: 'workspace.deleted', id: doomed.id, deleted: true });

      const refused = await readUntil(
        () => chatOnB(doomed.key, 'cfg'),
        (reply) => reply.status === 401,
      );
      expect(refused.status, refused.text).toBe(401);
      expect(await nodes.b.server.deps.lookups.config(doomed.id, 'cfg')).toBeUndefined();
      const onB = client(nodes.b.url, nodes.env.GATEWAY_ADMIN_KEY);
      expect((await onB.get('/workspaces')).body.data.map((w: { slug: string }) => w.slug)).toEqual([
        'default',
        'kept',
      ]);

      // The other workspace is untouched.
      const still = await chatOnB(kept.key, 'cfg');
      expect(still.status, still.text).toBe(200);
      expect(nodes.fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-kept');

      // Its slug may be taken again, on either node: a new workspace holding nothing of the old one.
      const again = await onB.post('/workspaces', { name: 'doomed', slug: 'doomed' });
      expect(again.status, again.text).toBe(200);
      expect(again.body.id).not.toBe(doomed.id);
      expect((await client(nodes.b.url, again.body.admin_key.key).get('/configs')).body.data).toEqual([]);
    });
  });
});
