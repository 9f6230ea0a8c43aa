/**
 * Two gateway nodes on one PostgreSQL schema and one Redis prefix: a key revoked or rotated through one node
 * is refused at once on both, and the other keys both nodes hold stay in their caches (one key's change
 * is no reason to read every key in use from the store again).
 */
import { expect, it } from 'vitest';
import { describeWithPostgres } from '../helpers/postgres.js';
import { describeWithRedis } from '../helpers/redis.js';
import { readUntil, twoNodesSharingStores } from '../helpers/two-nodes.js';
import { call, client, expectError } from './http.js';

describeWithPostgres('one key changed on one of two nodes (PostgreSQL)', () => {
  describeWithRedis('sharing PostgreSQL and Redis', () => {
    const nodes = twoNodesSharingStores('key-revoke-nodes');

    /** A workspace with its admin key and two member keys, each used once on both nodes. */
    async function workspaceWithKeys(slug: string) {
      const created = await client(nodes.a.url, nodes.env.GATEWAY_ADMIN_KEY).post('/workspaces', {
        name: slug,
        slug,
      });
      expect(created.status, created.text).toBe(200);
      const admin = created.body.admin_key.key as string;
      const onA = client(nodes.a.url, admin);
      const keys: Array<{ id: string; value: string }> = [];
      for (const name of ['changed', 'kept']) {
        const key = await onA.post('/api-keys', { name, role: 'member' });
        expect(key.status, key.text).toBe(200);
        keys.push({ id: key.body.id as string, value: key.body.key as string });
      }
      for (const node of [nodes.a, nodes.b]) {
        for (const value of [admin, ...keys.map((key) => key.value)]) {
          expect((await call(node.url, value, 'GET', '/models')).status).toBe(200);
        }
      }
      return { onA, admin, changed: keys[0], kept: keys[1] };
    }

    function expectStillCached(values: string[]) {
      for (const node of [nodes.a, nodes.b]) {
        for (const value of values) {
          expect(node.server.deps.lookups.cachedApiKey(value)).toMatchObject({ status: 'active' });
        }
      }
    }

    it('a revoked key is refused on both nodes, and the other keys stay cached on both', async () => {
      const { onA, admin, changed, kept } = await workspaceWithKeys('revoking');
      const revoked = await onA.post(`/api-keys/${changed.id}/revoke`);
      expect(revoked.status, revoked.text).toBe(200);

      expectError(await call(nodes.a.url, changed.value, 'GET', '/models'), 401, 'invalid_api_key');
      const onB = await readUntil(
        () => call(nodes.b.url, changed.value, 'GET', '/models'),
        (reply) => reply.status === 401,
      );
      expectError(onB, 401, 'invalid_api_key');
      expectStillCached([admin, kept.value]);
    });

    it("a rotated key's old value is refused on both nodes, its new one works, and the other keys stay cached", async () => {
      const { onA, admin, changed, kept } = await workspaceWithKeys('rotating');
      const rotated = await onA.post(`/api-keys/${changed.id}/rotate`);
      expect(rotated.status, rotated.text).toBe(200);

      expectError(await call(nodes.a.url, changed.value, 'GET', '/models'), 401, 'invalid_api_key');
      const onB = await readUntil(
        () => call(nodes.b.url, changed.value, 'GET', '/models'),
        (reply) => reply.status === 401,
      );
      expectError(onB, 401, 'invalid_api_key');
      for (const node of [nodes.a, nodes.b]) {
        expect((await call(node.url, rotated.body.key as string, 'GET', '/models')).status).toBe(200);
      }
      expectStillCached([admin, kept.value]);
    });

    it("a deleted workspace's keys are refused on both nodes, and other workspaces' keys stay cached", async () => {
      const gone = await workspaceWithKeys('deleted');
      const stays = await workspaceWithKeys('staying');
      const deleted = await client(nodes.a.url, nodes.env.GATEWAY_ADMIN_KEY).delete('/workspaces/deleted');
      expect(deleted.status, deleted.text).toBe(200);

      for (const node of [nodes.a, nodes.b]) {
        const reply = await readUntil(
          () => call(node.url, gone.kept.value, 'GET', '/models'),
          (answer) => answer.status === 401,
        );
        expectError(reply, 401, 'invalid_api_key');
      }
      expectStillCached([stays.admin, stays.changed.value, stays.kept.value]);
    });
  });
});
