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
import { deploymentKeys, startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import {
  deleteRedisKeys,
  describeWithRedis,
  freshRedisPrefix,
  listRedisKeys,
  redisUrl,
} from '../helpers/redis.js';
import { target } from '../routing/support.js';

/** How long a change may take to cross Redis: generous for a loaded machine. */
const PROPAGATION_DEADLINE_MS = 5_000;
const YEAR = 365 * 86_400;

function settingsEnv() {
  return {
    ...deploymentKeys('wsdel'),
    GATEWAY_SEMANTIC_CACHE_VIRTUAL_KEY: 'embedder',
    GATEWAY_SEMANTIC_CACHE_EMBEDDING_MODEL: 'bow-embedding',
  };
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + PROPAGATION_DEADLINE_MS;
  while (!(await condition()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(await condition()).toBe(true);
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
  const env = settingsEnv();
  let gateway: TestGateway;
  let fake: FakeUpstream;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'wsdel' });
    gateway = await startGateway({ env });
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  it("removes the workspace's simple and semantic cache entries", async () => {
    const kept = await workspaceWithCache(gateway, env.GATEWAY_ADMIN_KEY, fake);
    const deleted = await workspaceWithCache(gateway, env.GATEWAY_ADMIN_KEY, fake);
    for (const ws of [kept, deleted]) {
      expect((await ask(gateway, ws.key, fake, 'simple', 'What is two and two?')).status).toBe('MISS');
      expect((await ask(gateway, ws.key, fake, 'simple', 'What is two and two?')).status).toBe('HIT');
    }
    const stored = await ask(gateway, deleted.key, fake, 'semantic', 'What is the boiling point of water?');
    expect(stored.status).toBe('SEMANTIC_MISS');
    const { deps } = gateway.server;
    const memory = deps.routing.cache as MemoryResponseCache;
    expect(memory.size).toBe(2);
    // Its row is written once the answer has gone out.
    await until(
      async () => (await deps.store.getSemanticCacheEntry(deleted.id, stored.entry!)) !== undefined,
    );
    expect(await deps.routing.semantic.cache.heldEntries()).toBe(1);

    await deleteWorkspace(gateway, env.GATEWAY_ADMIN_KEY, deleted.id);
    expect(memory.size).toBe(1);
    expect(await deps.store.getSemanticCacheEntry(deleted.id, stored.entry!)).toBeUndefined();
    expect(await deps.routing.semantic.cache.heldEntries()).toBe(0);
    // The other workspace's answer is still there.
    expect((await ask(gateway, kept.key, fake, 'simple', 'What is two and two?')).status).toBe('HIT');
  });
});

describeWithPostgres('deleting a workspace, two nodes (PostgreSQL)', () => {
  describeWithRedis('sharing PostgreSQL and Redis', () => {
    const schema = freshSchemaName('workspace_cache');
    const prefix = freshRedisPrefix('workspace-cache');
    const env = { ...settingsEnv(), REDIS_URL: redisUrl(), GATEWAY_REDIS_PREFIX: prefix };
    let nodeA: TestGateway;
    let nodeB: TestGateway;
    let fake: FakeUpstream;

    beforeAll(async () => {
      fake = await startFakeOpenAI({ name: 'wsdel-nodes' });
      const postgres = { url: postgresUrl(), schema };
      nodeA = await startGateway({ env, postgres });
      nodeB = await startGateway({ env, postgres });
    });
    afterAll(async () => {
      await nodeA?.close();
      await nodeB?.close();
      await fake?.close();
      await dropSchema(schema);
      await deleteRedisKeys(prefix);
    });

    it("removes the workspace's answers from Redis, the store and every node's index", async () => {
      const kept = await workspaceWithCache(nodeA, env.GATEWAY_ADMIN_KEY, fake);
      const deleted = await workspaceWithCache(nodeA, env.GATEWAY_ADMIN_KEY, fake);
      for (const ws of [kept, deleted]) {
        expect((await ask(nodeA, ws.key, fake, 'simple', 'What is two and two?')).status).toBe('MISS');
        expect((await ask(nodeB, ws.key, fake, 'simple', 'What is two and two?')).status).toBe('HIT');
      }
      const cached = () => listRedisKeys(`${prefix}cache:`);
      expect(await cached()).toHaveLength(2);
      const stored = await ask(nodeA, deleted.key, fake, 'semantic', 'What is the boiling point of water?');
      expect(stored.status).toBe('SEMANTIC_MISS');
      // A writes the entry's row once its answer has gone out: B finds it only after that.
      await until(
        async () =>
          (await nodeA.server.deps.store.getSemanticCacheEntry(deleted.id, stored.entry!)) !== undefined,
      );
      // B holds the partition too.
      const onB = await ask(nodeB, deleted.key, fake, 'semantic', 'Water: what is its boiling point?');
      expect(onB.status).toBe('SEMANTIC_HIT');
      const held = (node: TestGateway) => node.server.deps.routing.semantic.cache.heldEntries();
      expect(await held(nodeB)).toBe(1);

      await deleteWorkspace(nodeA, env.GATEWAY_ADMIN_KEY, deleted.id);
      expect(await cached()).toHaveLength(1);
      expect(await nodeA.server.deps.store.getSemanticCacheEntry(deleted.id, stored.entry!)).toBeUndefined();
      expect(await held(nodeA)).toBe(0);
      await until(async () => (await held(nodeB)) === 0);
      expect((await ask(nodeB, kept.key, fake, 'simple', 'What is two and two?')).status).toBe('HIT');
    });
  });
});
