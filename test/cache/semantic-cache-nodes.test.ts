/**
 * The semantic cache on two gateway nodes sharing PostgreSQL and Redis, through the `openai` SDK: an
 * entry one node stores answers on the other, whether the other reads the partition afresh from the
 * store or already holds it (then the invalidation channel brings the entry); an entry removed on one
 * node leaves the other's index.
 */
import OpenAI from 'openai';
import { beforeAll, expect, it } from 'vitest';
import { ensureDefaultWorkspace } from '../../src/bootstrap.js';
import type { TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres } from '../helpers/postgres.js';
import { describeWithRedis } from '../helpers/redis.js';
import { readUntil, twoNodesSharingStores } from '../helpers/two-nodes.js';
import { target } from '../routing/support.js';

describeWithPostgres('semantic cache on two nodes (PostgreSQL)', () => {
  describeWithRedis('sharing PostgreSQL and Redis', () => {
    const nodes = twoNodesSharingStores('semantic-cache', {
      // The embedding target from the settings, not the config.
      GATEWAY_SEMANTIC_CACHE_VIRTUAL_KEY: 'embedder',
      GATEWAY_SEMANTIC_CACHE_EMBEDDING_MODEL: 'bow-embedding',
    });

    beforeAll(async () => {
      const created = await fetch(`${nodes.a.url}/virtual-keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': nodes.a.adminKey },
        body: JSON.stringify({
          slug: 'embedder',
          name: 'e',
          provider: 'openai',
          api_key: 'sk-e',
          custom_host: nodes.fake.url,
        }),
      });
      expect(created.status, await created.text()).toBe(200);
    });

    async function ask(node: TestGateway, question: string) {
      const client = new OpenAI({
        baseURL: node.url,
        apiKey: 'unused',
        maxRetries: 0,
        defaultHeaders: {
          'x-gateway-api-key': node.adminKey,
          'x-gateway-config': JSON.stringify(target(nodes.fake, { cache: { mode: 'semantic' } })),
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
    const heldByB = () => held(nodes.b);
    const heldByBReaching = (count: number) => readUntil(heldByB, (now) => now === count);

    /** An entry's row is written after its answer has gone out (not awaited): this waits for the row. */
    async function stored(entryId: string | null): Promise<void> {
      const { store } = nodes.b.server.deps;
      const workspace = await ensureDefaultWorkspace(store);
      const entry = await readUntil(
        () => store.getSemanticCacheEntry(workspace.id, entryId!),
        (found) => found !== undefined,
      );
      expect(entry).toBeDefined();
    }

    it('shares entries both ways and removes them from both', async () => {
      // B stores the first entry; A reads the partition from the store when first asked.
      const first = await ask(nodes.b, 'What is the boiling point of water?');
      expect(first.status).toBe('SEMANTIC_MISS');
      await stored(first.entry);
      const onA = await ask(nodes.a, 'Water: what is its boiling point?');
      expect(onA).toMatchObject({
        status: 'SEMANTIC_HIT',
        content: '[semantic-cache] What is the boiling point of water?',
      });

      // Both hold the partition now: an entry A stores reaches B's index over the channel.
      const heldOnB = await heldByB();
      const second = await ask(nodes.a, 'What is the freezing point of water?');
      expect(second.status).toBe('SEMANTIC_MISS');
      expect(await heldByBReaching(heldOnB + 1)).toBe(heldOnB + 1);
      const onB = await ask(nodes.b, 'Water: what is its freezing point?');
      expect(onB).toMatchObject({
        status: 'SEMANTIC_HIT',
        content: '[semantic-cache] What is the freezing point of water?',
      });

      // Removed through A's management API: gone from B's index too.
      const removed = await fetch(`${nodes.a.url}/cache/semantic/entries/${second.entry}`, {
        method: 'DELETE',
        headers: { 'x-gateway-api-key': nodes.a.adminKey },
      });
      expect(removed.status).toBe(200);
      expect(await heldByBReaching(heldOnB)).toBe(heldOnB);
      expect((await ask(nodes.b, 'Water: what is its freezing point?')).status).toBe('SEMANTIC_MISS');
    });
  });
});
