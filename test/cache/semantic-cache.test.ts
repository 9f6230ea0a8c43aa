/**
 * The semantic cache's entries over a real SQLite store, with a clock the test moves: what the index
 * proposes is read back from the store, expiry holds in both, and the sweep empties both.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SemanticCache } from '../../src/gateway/cache/semantic/semantic-cache.js';
import type { SemanticCacheEvent } from '../../src/gateway/invalidation.js';
import { unitVector } from '../../src/gateway/cache/semantic/vector-index.js';
import { openStore } from '../../src/store/index.js';
import type { SemanticCacheEntry, Store } from '../../src/store/types.js';

let dataDir: string;
let store: Store;
let workspaceId: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'semantic-cache-'));
  store = await openStore({ databaseUrl: undefined, dataDir, masterKey: randomBytes(32) });
  const org = await store.createOrganisation({ name: 'o' });
  workspaceId = (await store.createWorkspace({ organisation_id: org.id, name: 'w', slug: 'w' })).id;
});
afterAll(async () => {
  await store?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const vector = (...values: number[]) => unitVector(values) as Float32Array;

function entry(overrides: Partial<SemanticCacheEntry>): SemanticCacheEntry {
  return {
    id: `sc_${randomBytes(6).toString('hex')}`,
    workspace_id: workspaceId,
    namespace: '',
    partition_key: 'p',
    exact_key: `x_${randomBytes(4).toString('hex')}`,
    vector: vector(1, 0, 0),
    answer: JSON.stringify({ kind: 'json', body: { answer: 1 }, storedAt: 0 }),
    created_at_ms: 0,
    expires_at_ms: 1_000,
    ...overrides,
  };
}

/** A cache over a partition of its own, and the lookup of one question in it (exact key `k`, along x). */
function freshPartition() {
  const cache = new SemanticCache(store, { now: () => 0 });
  const partition = `p_${randomBytes(4).toString('hex')}`;
  const lookup = () =>
    cache.lookup({
      workspaceId,
      partition,
      exactKey: 'k',
      threshold: 0.95,
      embed: async () => vector(1, 0, 0),
    });
  return { cache, partition, lookup };
}

describe('SemanticCache', () => {
  it('answers exactly, then by similarity above the threshold, until the entry expires', async () => {
    let now = 0;
    const events: SemanticCacheEvent[] = [];
    const cache = new SemanticCache(store, { now: () => now, publish: (event) => events.push(event) });
    const partition = `p_${randomBytes(4).toString('hex')}`;
    const stored = entry({ partition_key: partition, exact_key: 'same' });
    const lookup = (exactKey: string, query: Float32Array, threshold = 0.95) =>
      cache.lookup({ workspaceId, partition, exactKey, threshold, embed: async () => query });

    expect((await lookup('same', vector(1, 0, 0))).kind).toBe('miss');
    await cache.add(stored);
    expect(events).toEqual([
      { kind: 'semantic-cache', op: 'added', workspaceId, partition, ids: [stored.id] },
    ]);
    expect(await lookup('same', vector(0, 1, 0))).toMatchObject({ kind: 'exact', entry: { id: stored.id } });
    const close = await lookup('other', vector(1, 0.2, 0));
    expect(close).toMatchObject({ kind: 'similar', entry: { id: stored.id } });
    const far = await lookup('other', vector(1, 0.5, 0));
    expect(far).toMatchObject({ kind: 'miss', similarity: expect.closeTo(0.894, 3) });
    expect((await lookup('other', vector(1, 0.5, 0), 0.85)).kind).toBe('similar');

    now = 1_000;
    expect((await lookup('same', vector(1, 0, 0))).kind).toBe('miss');
    await cache.sweep();
    expect(await cache.heldEntries()).toBe(0);
    expect(await store.getSemanticCacheEntry(workspaceId, stored.id)).toBeUndefined();
    cache.close();
  });

  it('answers a request of the same vector at a threshold of 1, though float32 rounding puts it just under 1', async () => {
    const cache = new SemanticCache(store, { now: () => 0 });
    const partition = `p_${randomBytes(4).toString('hex')}`;
    // Stored as float32, (1, 1) at unit length is 0.70710677 twice: its dot product with itself is 0.99999997.
    const stored = entry({ partition_key: partition, exact_key: 'stored', vector: vector(1, 1) });
    const lookup = (query: Float32Array, threshold: number) =>
      cache.lookup({ workspaceId, partition, exactKey: 'other', threshold, embed: async () => query });
    expect((await lookup(vector(1, 1), 1)).kind).toBe('miss');
    await cache.add(stored);
    expect(await lookup(vector(1, 1), 1)).toMatchObject({ kind: 'similar', entry: { id: stored.id } });
    // A vector that differs by more than float32 rounding is not the same one (similarity 0.9999875).
    expect((await lookup(vector(1, 1.01), 1)).kind).toBe('miss');
    expect((await lookup(vector(1, 1.01), 0.99999)).kind).toBe('miss');
    expect((await lookup(vector(1, 1.01), 0.99998)).kind).toBe('similar');
    await cache.close();
  });

  it('a refreshed entry supersedes the entries that would have answered its request, on every node', async () => {
    const events: SemanticCacheEvent[] = [];
    const cache = new SemanticCache(store, { now: () => 0, publish: (event) => events.push(event) });
    const partition = `p_${randomBytes(4).toString('hex')}`;
    const equal = entry({ partition_key: partition, exact_key: 'asked', vector: vector(0, 1, 0) });
    const similar = entry({ partition_key: partition, exact_key: 'close', vector: vector(1, 0.1, 0) });
    const apart = entry({ partition_key: partition, exact_key: 'apart', vector: vector(0, 0, 1) });
    for (const stored of [equal, similar, apart]) await cache.add(stored);
    // Another node holds the partition and hears what this one publishes.
    const other = new SemanticCache(store, { now: () => 0 });
    const lookup = (c: SemanticCache, exactKey: string, query: Float32Array) =>
      c.lookup({ workspaceId, partition, exactKey, threshold: 0.95, embed: async () => query });
    expect(await lookup(other, 'asked', vector(0, 0, 1))).toMatchObject({ entry: { id: equal.id } });

    events.length = 0;
    const refreshed = entry({ partition_key: partition, exact_key: 'asked', vector: vector(1, 0, 0) });
    await cache.add(refreshed, 0.95);
    for (const event of events) await other.applyRemote(event);
    expect(events.find((event) => event.op === 'removed')?.ids.sort()).toEqual([equal.id, similar.id].sort());
    for (const node of [cache, other]) {
      expect(await lookup(node, 'asked', vector(0, 0, 1))).toMatchObject({ entry: { id: refreshed.id } });
      expect(await lookup(node, 'close', vector(1, 0.1, 0))).toMatchObject({
        kind: 'similar',
        entry: { id: refreshed.id },
      });
      expect(await lookup(node, 'apart', vector(0, 1, 1))).toMatchObject({ entry: { id: apart.id } });
    }
    expect(await store.getSemanticCacheEntry(workspaceId, equal.id)).toBeUndefined();
    expect(await store.getSemanticCacheEntry(workspaceId, similar.id)).toBeUndefined();
    await cache.close();
    await other.close();
  });

  it('a refresh supersedes the entries of its partition this node let go under its memory bound, too', async () => {
    const events: SemanticCacheEvent[] = [];
    const cache = new SemanticCache(store, {
      now: () => 0,
      maxEntries: 3,
      publish: (event) => events.push(event),
    });
    const [partition, elsewhere] = [
      `p_${randomBytes(4).toString('hex')}`,
      `p_${randomBytes(4).toString('hex')}`,
    ];
    const lookup = (c: SemanticCache, at: string, exactKey: string, query: Float32Array) =>
      c.lookup({ workspaceId, partition: at, exactKey, threshold: 0.95, embed: async () => query });
    // Of the refreshed request's exact key, and of a question close to it; then one apart.
    const equal = entry({ partition_key: partition, exact_key: 'asked', vector: vector(0, 0, 1) });
    const close = entry({ partition_key: partition, exact_key: 'close', vector: vector(1, 0, 0) });
    const apart = entry({ partition_key: partition, exact_key: 'apart', vector: vector(0, 1, 0) });
    expect((await lookup(cache, partition, 'none', vector(0, 1, 1))).kind).toBe('miss');
    for (const stored of [equal, close, apart]) await cache.add(stored);
    // Two entries of another partition push the two least recently used out of this node's memory.
    expect((await lookup(cache, elsewhere, 'none', vector(0, 1, 1))).kind).toBe('miss');
    await cache.add(entry({ partition_key: elsewhere, vector: vector(1, 1, 0) }));
    await cache.add(entry({ partition_key: elsewhere, vector: vector(1, 0, 1) }));
    expect((await lookup(cache, partition, 'close', vector(1, 0, 0))).kind).toBe('miss');

    events.length = 0;
    const refreshed = entry({ partition_key: partition, exact_key: 'asked', vector: vector(1, 0.1, 0) });
    await cache.add(refreshed, 0.95);
    expect(events.find((event) => event.op === 'removed')?.ids.sort()).toEqual([equal.id, close.id].sort());
    expect(await store.getSemanticCacheEntry(workspaceId, equal.id)).toBeUndefined();
    expect(await store.getSemanticCacheEntry(workspaceId, close.id)).toBeUndefined();
    expect(await store.getSemanticCacheEntry(workspaceId, apart.id)).toMatchObject({ id: apart.id });
    // A node that reads the partition afresh is answered by the refreshed entry, never an earlier one.
    const other = new SemanticCache(store, { now: () => 0 });
    expect(await lookup(other, partition, 'asked', vector(0, 0, 1))).toMatchObject({
      kind: 'exact',
      entry: { id: refreshed.id },
    });
    expect(await lookup(other, partition, 'close', vector(1, 0, 0))).toMatchObject({
      kind: 'similar',
      entry: { id: refreshed.id },
    });
    await cache.close();
    await other.close();
  });

  it('never answers with an entry the store no longer has', async () => {
    const cache = new SemanticCache(store, { now: () => 0 });
    const other = new SemanticCache(store, { now: () => 0 });
    const partition = `p_${randomBytes(4).toString('hex')}`;
    const stored = entry({ partition_key: partition });
    const lookup = (c: SemanticCache) =>
      c.lookup({
        workspaceId,
        partition,
        exactKey: 'k',
        threshold: 0.95,
        embed: async () => vector(1, 0, 0),
      });
    await cache.add(stored);
    expect((await lookup(other)).kind).toBe('similar');
    // Removed through the first; the second hears nothing (no channel here) but reads back from the store.
    expect(await cache.removeEntry(workspaceId, stored.id)).toBe(true);
    expect((await lookup(other)).kind).toBe('miss');
    expect(await other.heldEntries()).toBe(0);
    cache.close();
    other.close();
  });

  it('holds at most maxEntries in memory, least recently used leaving first; the store keeps them', async () => {
    const cache = new SemanticCache(store, { now: () => 0, maxEntries: 2 });
    const [first, second] = [`p_${randomBytes(4).toString('hex')}`, `p_${randomBytes(4).toString('hex')}`];
    const lookup = (partition: string, query: Float32Array) =>
      cache.lookup({ workspaceId, partition, exactKey: 'k', threshold: 0.95, embed: async () => query });
    const a = entry({ partition_key: first, vector: vector(1, 0, 0), created_at_ms: -3 });
    const b = entry({ partition_key: first, vector: vector(0, 1, 0), created_at_ms: -2 });
    expect((await lookup(first, vector(0, 0, 1))).kind).toBe('miss'); // holds the first partition
    await cache.add(a);
    await cache.add(b);
    // a answers, so b is now the least recently used.
    expect(await lookup(first, vector(1, 0, 0))).toMatchObject({ kind: 'similar', entry: { id: a.id } });
    expect((await lookup(second, vector(0, 0, 1))).kind).toBe('miss');
    const c = entry({ partition_key: second, vector: vector(0, 0, 1), created_at_ms: -1 });
    await cache.add(c);
    expect(await cache.heldEntries()).toBe(2);
    // b left this node's memory, not the store: its partition still holds a, so b is not found here.
    expect(await store.getSemanticCacheEntry(workspaceId, b.id)).toMatchObject({ id: b.id });
    expect(await lookup(first, vector(0, 1, 0))).toMatchObject({
      kind: 'miss',
      similarity: expect.closeTo(0, 6),
    });

    // A partition that lost every entry is read again from the store when next asked: its newest ones.
    const d = entry({ partition_key: second, vector: vector(0, 1, 1), created_at_ms: 0 });
    await cache.add(d); // a, now the least recently used, leaves: its partition holds none and is let go
    expect(await cache.heldEntries()).toBe(2);
    expect(await lookup(first, vector(0, 1, 0))).toMatchObject({ kind: 'similar', entry: { id: b.id } });
    expect(await lookup(first, vector(1, 0, 0))).toMatchObject({ kind: 'similar', entry: { id: a.id } });
    expect(await cache.heldEntries()).toBe(2);
    await cache.close();
  });

  it('holds an added entry at once and writes its row after the current turn', async () => {
    const { cache, partition, lookup } = freshPartition();
    expect((await lookup()).kind).toBe('miss');
    const stored = entry({ partition_key: partition });
    const adding = cache.add(stored);
    // Not in the store yet, but a lookup waits for the row rather than dropping the entry.
    expect(await store.getSemanticCacheEntry(workspaceId, stored.id)).toBeUndefined();
    expect(await lookup()).toMatchObject({ kind: 'similar', entry: { id: stored.id } });
    await adding;
    expect(await store.getSemanticCacheEntry(workspaceId, stored.id)).toMatchObject({ id: stored.id });
    await cache.close();
  });

  it('forgets an entry whose row the store refuses', async () => {
    const { cache, partition, lookup } = freshPartition();
    expect((await lookup()).kind).toBe('miss');
    const stored = entry({ partition_key: partition });
    await cache.add(stored);
    // The same id again: the store's primary key refuses the row.
    await expect(cache.add({ ...stored, exact_key: 'again' })).rejects.toThrow();
    expect(await cache.heldEntries()).toBe(0);
    await cache.close();
  });
});
