/**
 * A deleted workspace's cached answers go with it: the simple cache's (process memory, or Redis) and the
 * semantic cache's (rows of the store, and every node's index), rather than stay until they expire — up to
 * a hundred years under a large `max_age`. Embedded (SQLite, memory), then two nodes sharing PostgreSQL and
 * Redis, through the `openai` SDK.
 */
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryResponseCache } from '../../src/gateway/cache/memory-response-cache.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres } from '../helpers/postgres.js';
import { describeWithRedis, listRedisKeys } from '../helpers/redis.js';
import { readUntil, twoNodesSharingStores } from '../helpers/two-nodes.js';
import { target } from '../routing/support.js';

const YEAR = 365 * 86_400;

/** The semantic cache's embeddings go to the virtual key `embedder` of the caller's workspace. */
const SEMANTIC_CACHE_SETTINGS = {
  GATEWAY_SEMANTIC_CACHE_VIRTUAL_KEY: 'embedder',
  GATEWAY_SEMANTIC_CACHE_EMBEDDING_MODEL: 'bow-embedding',
};

/** The row of a semantic cache entry, written once its answer has gone out: undefined past the deadline. */
function storedEntry(node: TestGateway, workspaceId: string, entryId: string) {
  return readUntil(
    () => node.server.deps.store.getSemanticCacheEntry(workspaceId, entryId),
    (row) => row !== undefined,
  );
}

async function json(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text) as Record<string, unknown>;
}

/** A new workspace of the organisation, its admin key, and a virtual key for the embeddings in it. */
async function workspaceWithCache(node: TestGateway, adminKey: string, fake: FakeUpstream) {
  const slug = `cached-${randomBytes(4).toString('hex')}`;
  const made = await json(
    await fetch(`${node.url}/workspaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': adminKey },
      body: JSON.stringify({ name: slug, slug }),
    }),
  );
  const key = (made.admin_key as { key: string }).key;
  await json(
    await fetch(`${node.url}/virtual-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': key },
      body: JSON.stringify({
        slug: 'embedder',
        name: 'e',
        provider: 'openai',
        api_key: 'sk-e',
        custom_host: fake.url,
      }),
    }),
  );
  return { id: made.id as string, key };
}

async function ask(
  node: TestGateway,
  key: string,
  fake: FakeUpstream,
  mode: 'simple' | 'semantic',
  question: string,
) {
  const client = new OpenAI({
    baseURL: node.url,
    apiKey: 'unused',
    maxRetries: 0,
    defaultHeaders: {
      'x-gateway-api-key': key,
      'x-gateway-config': JSON.stringify(target(fake, { cache: { mode, max_age: 50 * YEAR } })),
    },
  });
  const { response } = await client.chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] })
    .withResponse();
  return {
    status: response.headers.get('x-gateway-cache-status'),
    entry: response.headers.get('x-gateway-cache-entry-id'),
  };
}

async function deleteWorkspace(node: TestGateway, adminKey: string, id: string): Promise<void> {
  await json(
    await fetch(`${node.url}/workspaces/${id}`, {
      method: 'DELETE',
      headers: { 'x-gateway-api-key': adminKey },
    }),
  );
}

describe('deleting a workspace, embedded (SQLite, process memory)', () => {
  let gateway: TestGateway;
  let fake: FakeUpstream;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'wsdel' });
    gateway = await startGateway({ env: SEMANTIC_CACHE_SETTINGS });
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  it("removes the workspace's simple and semantic cache entries", async () => {
    const kept = await workspaceWithCache(gateway, gateway.adminKey, fake);
    const deleted = await workspaceWithCache(gateway, gateway.adminKey, fake);
    for (const ws of [kept, deleted]) {
      expect((await ask(gateway, ws.key, fake, 'simple', 'What is two and two?')).status).toBe('MISS');
      expect((await ask(gateway, ws.key, fake, 'simple', 'What is two and two?')).status).toBe('HIT');
    }
    const stored = await ask(gateway, deleted.key, fake, 'semantic', 'What is the boiling point of water?');
    expect(stored.status).toBe('SEMANTIC_MISS');
    const { deps } = gateway.server;
    const memory = deps.routing.cache as MemoryResponseCache;
    expect(memory.size).toBe(2);
    expect(await storedEntry(gateway, deleted.id, stored.entry!)).toBeDefined();
    expect(await deps.routing.semantic.cache.heldEntries()).toBe(1);

    await deleteWorkspace(gateway, gateway.adminKey, deleted.id);
    expect(memory.size).toBe(1);
    expect(await deps.store.getSemanticCacheEntry(deleted.id, stored.entry!)).toBeUndefined();
    expect(await deps.routing.semantic.cache.heldEntries()).toBe(0);
    // The other workspace's answer is still there.
    expect((await ask(gateway, kept.key, fake, 'simple', 'What is two and two?')).status).toBe('HIT');
  });
});

describeWithPostgres('deleting a workspace, two nodes (PostgreSQL)', () => {
  describeWithRedis('sharing PostgreSQL and Redis', () => {
    const nodes = twoNodesSharingStores('workspace-cache', SEMANTIC_CACHE_SETTINGS);

    it("removes the workspace's answers from Redis, the store and every node's index", async () => {
      const { a: nodeA, b: nodeB, fake } = nodes;
      const kept = await workspaceWithCache(nodeA, nodeA.adminKey, fake);
      const deleted = await workspaceWithCache(nodeA, nodeA.adminKey, fake);
      for (const ws of [kept, deleted]) {
        expect((await ask(nodeA, ws.key, fake, 'simple', 'What is two and two?')).status).toBe('MISS');
        expect((await ask(nodeB, ws.key, fake, 'simple', 'What is two and two?')).status).toBe('HIT');
      }
      const cached = () => listRedisKeys(`${nodes.prefix}cache:`);
      expect(await cached()).toHaveLength(2);
      const stored = await ask(nodeA, deleted.key, fake, 'semantic', 'What is the boiling point of water?');
      expect(stored.status).toBe('SEMANTIC_MISS');
      // A writes the entry's row once its answer has gone out: B finds it only after that.
      expect(await storedEntry(nodeA, deleted.id, stored.entry!)).toBeDefined();
      // B holds the partition too.
      const onB = await ask(nodeB, deleted.key, fake, 'semantic', 'Water: what is its boiling point?');
      expect(onB.status).toBe('SEMANTIC_HIT');
      const held = (node: TestGateway) => node.server.deps.routing.semantic.cache.heldEntries();
      const heldByB = () => held(nodeB);
      expect(await heldByB()).toBe(1);

      await deleteWorkspace(nodeA, nodeA.adminKey, deleted.id);
      expect(await cached()).toHaveLength(1);
      expect(await nodeA.server.deps.store.getSemanticCacheEntry(deleted.id, stored.entry!)).toBeUndefined();
      expect(await held(nodeA)).toBe(0);
      expect(await readUntil(heldByB, (count) => count === 0)).toBe(0);
      expect((await ask(nodeB, kept.key, fake, 'simple', 'What is two and two?')).status).toBe('HIT');
    });
  });
});
