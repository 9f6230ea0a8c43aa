/**
 * The semantic cache's entries: rows in the store (the truth, shared by every node on the same database)
 * and, on each node, an in-process index per partition loaded from them the first time the partition is
 * asked. A node that stores or removes entries tells the others through the invalidation channel
 * (Redis pub/sub; `publish`), and they update the partitions they hold. An index only proposes: a hit
 * is read back from the store by id and must still be there, fresh and of the asked partition, so a
 * stale index can cost a miss but never serve a removed, expired or foreign answer.
 */
import type { SemanticCacheEntry, SemanticCacheRemoval, Store } from '../../../store/types.js';
import type { SemanticCacheEvent } from '../../invalidation.js';
import { VectorIndex, type VectorIndexOptions } from './vector-index.js';

export interface SemanticCacheOptions {
  /** The index's exact and approximate settings (vector-index.ts). */
  index?: VectorIndexOptions;
  /** Tells the other nodes of an added or removed entry. */
  publish?: (event: SemanticCacheEvent) => void;
  /** Milliseconds between sweeps of expired entries (index and store). Default one minute. */
  sweepIntervalMs?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

interface Partition {
  /** Created with the first vector: its length sets the dimensions. */
  index: VectorIndex | undefined;
  /** Exact key → entry id, for requests equal to a stored one. */
  exact: Map<string, { id: string; expiresAtMs: number }>;
  /** Entry id → its exact key, to forget it by id. */
  exactKeyOf: Map<string, string>;
}

export interface SemanticLookup {
  workspaceId: string;
  partition: string;
  exactKey: string;
  threshold: number;
  /** The request's vector (unit length), asked only when no entry matches exactly; undefined when it
   * could not be had (the request then misses). */
  embed: () => Promise<Float32Array | undefined>;
}

export type SemanticLookupResult =
  | { kind: 'exact'; entry: SemanticCacheEntry }
  | { kind: 'similar'; entry: SemanticCacheEntry; similarity: number }
  /** `vector` is the request's, to store its answer under; `similarity` the nearest entry's, if any. */
  | { kind: 'miss'; vector: Float32Array | undefined; similarity: number | undefined };

export class SemanticCache {
  private readonly partitions = new Map<string, Promise<Partition>>();
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;
  private sweeping: Promise<void> | undefined;
  /** Whether this node has used the cache since it started: a gateway that never does writes nothing. */
  private used = false;

  constructor(
    private readonly store: Store,
    private readonly options: SemanticCacheOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.sweeper = setInterval(() => void this.sweep(), options.sweepIntervalMs ?? 60_000);
    this.sweeper.unref();
  }

  async lookup(request: SemanticLookup): Promise<SemanticLookupResult> {
    const partition = await this.partition(request.workspaceId, request.partition);
    const now = this.now();
    const exact = partition.exact.get(request.exactKey);
    if (exact && exact.expiresAtMs > now) {
      const entry = await this.readBack(request, exact.id, now);
      if (entry) return { kind: 'exact', entry };
    }
    const vector = await request.embed();
    if (!vector) return { kind: 'miss', vector: undefined, similarity: undefined };
    const nearest = partition.index?.nearest(vector, this.now());
    if (nearest && nearest.similarity >= request.threshold) {
      const entry = await this.readBack(request, nearest.id, this.now());
      if (entry) return { kind: 'similar', entry, similarity: nearest.similarity };
    }
    return { kind: 'miss', vector, similarity: nearest?.similarity };
  }

  /** Stores an entry, adds it to this node's index and tells the other nodes. */
  async add(entry: SemanticCacheEntry): Promise<void> {
    await this.store.insertSemanticCacheEntry(entry);
    await this.addLocally(entry);
    this.options.publish?.({
      kind: 'semantic-cache',
      op: 'added',
      workspaceId: entry.workspace_id,
      partition: entry.partition_key,
      ids: [entry.id],
    });
  }

  async removeEntry(workspaceId: string, id: string): Promise<boolean> {
    const removed = await this.store.deleteSemanticCacheEntry(workspaceId, id);
    if (!removed) return false;
    await this.removed([removed]);
    return true;
  }

  /** Removes every entry of a namespace ('' for requests without one); resolves with how many. */
  async removeNamespace(workspaceId: string, namespace: string): Promise<number> {
    const removed = await this.store.deleteSemanticCacheNamespace(workspaceId, namespace);
    await this.removed(removed);
    return removed.length;
  }

  /** Another node added or removed entries. */
  async applyRemote(event: SemanticCacheEvent): Promise<void> {
    const loading = this.partitions.get(event.partition);
    if (!loading) return; // Not held here: it is read whole from the store when first asked.
    const partition = await loading;
    if (event.op === 'removed') {
      for (const id of event.ids) removeFrom(partition, id);
      return;
    }
    for (const id of event.ids) {
      const entry = await this.store.getSemanticCacheEntry(event.workspaceId, id);
      if (entry && entry.partition_key === event.partition) await this.addLocally(entry);
    }
  }

  /** Drops expired entries from the held partitions and the store. */
  sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      const now = this.now();
      for (const [key, loading] of this.partitions) {
        const partition = await loading;
        partition.index?.sweep(now);
        for (const [exactKey, exact] of partition.exact) {
          if (exact.expiresAtMs <= now) forgetExact(partition, exactKey, exact.id);
        }
        // An empty partition is read again (cheaply) when next asked.
        if (partition.exact.size === 0 && (partition.index?.size ?? 0) === 0) this.partitions.delete(key);
      }
      // In batches, so a large backlog never holds the database for long; every node that uses the
      // cache sweeps.
      if (!this.used) return;
      while ((await this.store.deleteExpiredSemanticCacheEntries(now, 1000)) === 1000);
    })()
      .catch(() => undefined)
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  /** Entries held in this node's indexes, for tests and metrics. */
  async heldEntries(): Promise<number> {
    let count = 0;
    for (const loading of this.partitions.values()) count += (await loading).index?.size ?? 0;
    return count;
  }

  private partition(workspaceId: string, key: string): Promise<Partition> {
    this.used = true;
    let loading = this.partitions.get(key);
    if (!loading) {
      loading = this.load(workspaceId, key);
      this.partitions.set(key, loading);
      // A failed load is not remembered: the next request tries again.
      loading.catch(() => this.partitions.delete(key));
    }
    return loading;
  }

  private async load(workspaceId: string, key: string): Promise<Partition> {
    const partition: Partition = { index: undefined, exact: new Map(), exactKeyOf: new Map() };
    for (const entry of await this.store.listSemanticCachePartition(workspaceId, key, this.now())) {
      addTo(partition, entry, this.options.index);
    }
    return partition;
  }

  private async addLocally(entry: Omit<SemanticCacheEntry, 'answer'>): Promise<void> {
    const loading = this.partitions.get(entry.partition_key);
    if (loading) addTo(await loading, entry, this.options.index);
  }

  private async removed(removals: SemanticCacheRemoval[]): Promise<void> {
    const byPartition = new Map<string, SemanticCacheRemoval[]>();
    for (const removal of removals) {
      const list = byPartition.get(removal.partition_key) ?? [];
      list.push(removal);
      byPartition.set(removal.partition_key, list);
    }
    for (const [key, list] of byPartition) {
      const loading = this.partitions.get(key);
      if (loading) {
        const partition = await loading;
        for (const removal of list) removeFrom(partition, removal.id);
      }
      this.options.publish?.({
        kind: 'semantic-cache',
        op: 'removed',
        workspaceId: list[0].workspace_id,
        partition: key,
        ids: list.map((removal) => removal.id),
      });
    }
  }

  /** The entry, when the store still has it fresh and in the asked partition; else drops it here. */
  private async readBack(
    request: SemanticLookup,
    id: string,
    now: number,
  ): Promise<SemanticCacheEntry | undefined> {
    const entry = await this.store.getSemanticCacheEntry(request.workspaceId, id);
    if (entry && entry.partition_key === request.partition && entry.expires_at_ms > now) return entry;
    const loading = this.partitions.get(request.partition);
    if (loading) removeFrom(await loading, id);
    return undefined;
  }
}

function addTo(
  partition: Partition,
  entry: Omit<SemanticCacheEntry, 'answer'>,
  options: VectorIndexOptions | undefined,
): void {
  partition.index ??= new VectorIndex(entry.vector.length, options);
  // A vector of other dimensions cannot be compared (the partition names the embedder, so this is a
  // changed model behind the same name): the entry is only found exactly.
  if (entry.vector.length === partition.index.dimensions) {
    partition.index.add(entry.id, entry.vector, entry.expires_at_ms);
  }
  // The newer of two entries of one exact key answers it.
  const previous = partition.exact.get(entry.exact_key);
  if (previous) partition.exactKeyOf.delete(previous.id);
  partition.exact.set(entry.exact_key, { id: entry.id, expiresAtMs: entry.expires_at_ms });
  partition.exactKeyOf.set(entry.id, entry.exact_key);
}

function forgetExact(partition: Partition, exactKey: string, id: string): void {
  partition.exact.delete(exactKey);
  partition.exactKeyOf.delete(id);
}

function removeFrom(partition: Partition, id: string): void {
  partition.index?.remove(id);
  const exactKey = partition.exactKeyOf.get(id);
  if (exactKey !== undefined) forgetExact(partition, exactKey, id);
}
