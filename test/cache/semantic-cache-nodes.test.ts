/**
 * The semantic cache on two gateway nodes sharing PostgreSQL and Redis, through the `openai` SDK: an
 * entry one node stores answers on the other, whether the other reads the partition afresh from the
 * store or already holds it (then the invalidation channel brings the entry); an entry removed on one
 * node leaves the other's index.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureDefaultWorkspace } from '../../src/bootstrap.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { deploymentKeys, startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { deleteRedisKeys, describeWithRedis, freshRedisPrefix, redisEnv } from '../helpers/redis.js';
import { target } from '../routing/support.js';

/** How long a change may take to cross Redis: generous for a loaded machine. */
const PROPAGATION_DEADLINE_MS = 5_000;

describeWithPostgres('semantic cache on two nodes (PostgreSQL)', () => {
  describeWithRedis('sharing PostgreSQL and Redis', () => {
    const schema = freshSchemaName('semantic_cache');
    const prefix = freshRedisPrefix('semantic-cache');
    const env = {
      ...deploymentKeys('sem'),
      ...redisEnv(prefix),
      // The embedding target from the settings, not the config.
      GATEWAY_SEMANTIC_CACHE_VIRTUAL_KEY: 'embedder',
      GATEWAY_SEMANTIC_CACHE_EMBEDDING_MODEL: 'bow-embedding',
    };
    let nodeA: TestGateway;
    let nodeB: TestGateway;
    let fake: FakeUpstream;

    beforeAll(async () => {
      fake = await startFakeOpenAI({ name: 'nodes' });
      const postgres = { url: postgresUrl(), schema };
      nodeA = await startGateway({ env, postgres });
      nodeB = await startGateway({ env, postgres });
      const created = await fetch(`${nodeA.url}/virtual-keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': env.GATEWAY_ADMIN_KEY },
        body: JSON.stringify({
          slug: 'embedder',
          name: 'e',
          provider: 'openai',
          api_key: 'sk-e',
          custom_host: fake.url,
        }),
      });
      expect(created.status, await created.text()).toBe(200);
    });
    afterAll(async () => {
      await nodeA?.close();
      await nodeB?.close();
      await fake?.close();
      await dropSchema(schema);
      await deleteRedisKeys(prefix);
    });

    async function ask(node: TestGateway, question: string) {
      const client = new OpenAI({
        baseURL: node.url,
        apiKey: 'unused',
        maxRetries: 0,
        defaultHeaders: {
          'x-gateway-api-key': env.GATEWAY_ADMIN_KEY,
          'x-gateway-config': JSON.stringify(target(fake, { cache: { mode: 'semantic' } })),
        },
      });
      const { data, response } = await client.chat.completions
        .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] })
        .withResponse();
      return {
        content: data.choices[0].message.content,
        status: response.headers.get('x-gateway-cache-status'),
        entry: response.headers.get('x-gateway-cache-entry-id'),
      };
    }

    const held = (node: TestGateway) => node.server.deps.routing.semantic.cache.heldEntries();

    async function until(condition: () => Promise<boolean>): Promise<void> {
      const deadline = Date.now() + PROPAGATION_DEADLINE_MS;
      while (!(await condition()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(await condition()).toBe(true);
    }

    /** An entry's row is written after its answer has gone out (not awaited): this waits for the row. */
    async function stored(entryId: string | null): Promise<void> {
      const { store } = nodeB.server.deps;
      const workspace = await ensureDefaultWorkspace(store);
      await until(async () => (await store.getSemanticCacheEntry(workspace.id, entryId!)) !== undefined);
    }

    it('shares entries both ways and removes them from both', async () => {
      // B stores the first entry; A reads the partition from the store when first asked.
      const first = await ask(nodeB, 'What is the boiling point of water?');
      expect(first.status).toBe('SEMANTIC_MISS');
      await stored(first.entry);
      const onA = await ask(nodeA, 'Water: what is its boiling point?');
      expect(onA).toMatchObject({
        status: 'SEMANTIC_HIT',
        content: '[nodes] What is the boiling point of water?',
      });

      // Both hold the partition now: an entry A stores reaches B's index over the channel.
      const heldOnB = await held(nodeB);
      const second = await ask(nodeA, 'What is the freezing point of water?');
      expect(second.status).toBe('SEMANTIC_MISS');
      await until(async () => (await held(nodeB)) === heldOnB + 1);
      const onB = await ask(nodeB, 'Water: what is its freezing point?');
      expect(onB).toMatchObject({
        status: 'SEMANTIC_HIT',
        content: '[nodes] What is the freezing point of water?',
      });

      // Removed through A's management API: gone from B's index too.
      const removed = await fetch(`${nodeA.url}/cache/semantic/entries/${second.entry}`, {
        method: 'DELETE',
        headers: { 'x-gateway-api-key': env.GATEWAY_ADMIN_KEY },
      });
      expect(removed.status).toBe(200);
      await until(async () => (await held(nodeB)) === heldOnB);
      expect((await ask(nodeB, 'Water: what is its freezing point?')).status).toBe('SEMANTIC_MISS');
    });
  });
});
