/**
 * Two gateway nodes on one PostgreSQL schema and one Redis prefix: keys created through one node (with a
 * workspace) leave the keys the other node holds in its cache where they are, however late the
 * announcements of their creation reach it.
 */
import { expect, it } from 'vitest';
import type { InvalidationEvent } from '../../src/gateway/invalidation.js';
import { describeWithPostgres } from '../helpers/postgres.js';
import { describeWithRedis } from '../helpers/redis.js';
import { readUntil, twoNodesSharingStores } from '../helpers/two-nodes.js';
import { call, client } from './http.js';

describeWithPostgres('keys created on one of two nodes (PostgreSQL)', () => {
  describeWithRedis('sharing PostgreSQL and Redis', () => {
    const nodes = twoNodesSharingStores('key-create-nodes');

    it('leave the keys the other node holds cached when their announcements arrive after it cached them', async () => {
      const lookups = nodes.b.server.deps.lookups;
      const applyRemote = lookups.applyRemote;
      // Node B's deliveries are held until it has cached the key.
      const held: InvalidationEvent[] = [];
      lookups.applyRemote = (event) => void held.push(event);
      try {
        const onA = client(nodes.a.url, nodes.env.GATEWAY_ADMIN_KEY);
        const first = await onA.post('/workspaces', { name: 'first', slug: 'first' });
        expect(first.status, first.text).toBe(200);
        const second = await onA.post('/workspaces', { name: 'second', slug: 'second' });
        expect(second.status, second.text).toBe(200);
        const key = first.body.admin_key.key as string;
        expect((await call(nodes.b.url, key, 'GET', '/configs')).status).toBe(200);
        expect(lookups.cachedApiKey(key)).toMatchObject({ workspace_id: first.body.id });

        // Both workspaces' admin keys announced, then heard by B.
        const keyEvents = () => held.filter((event) => event.kind === 'api-keys').length;
        expect(
          await readUntil(
            () => Promise.resolve(keyEvents()),
            (count) => count >= 2,
          ),
        ).toBe(2);
        for (const event of held) applyRemote(event);
        expect(lookups.cachedApiKey(key)).toMatchObject({ workspace_id: first.body.id });
      } finally {
        lookups.applyRemote = applyRemote;
      }
    });
  });
});
