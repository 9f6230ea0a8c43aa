/**
 * The semantic cache's entries: rows in the store (the truth, shared by every node on the same database)
 * and, on each node, an in-process index per partition loaded from them the first time the partition is
 * asked. A node that stores or removes entries tells the others through the invalidation channel
 * (Redis pub/sub; `publish`), and they update the partitions they hold. An index only proposes: a hit
 * is read back from the store by id and must still be there, fresh and of the asked partition, so a
 * stale index can cost a miss but never serve a removed, expired or foreign answer.
 *
 * A node holds at most `maxEntries` entries over all its partitions; past that the least recently used
 * (added or answering) leave its memory, not the store. A partition left with none is read again when
 * next asked (its newest `maxEntries`); until then the entries it let go are not found on this node.
 *
 * An added entry is held here at once, so this node's next equal question finds it; its row is written
 * after the current turn of the event loop (once the answer that made it has gone out), and a read of
 * it waits for that write. Other nodes are told only once the row is there.
 */
import type { SemanticCacheEntry, SemanticCacheRemoval, Store } from '../../../store/types.js';
import type { SemanticCacheEvent } from '../../invalidation.js';
import { dot, SIMILARITY_TOLERANCE, VectorIndex, type VectorIndexOptions } from './vector-index.js';

export interface SemanticCacheOptions {
  /** The index's exact and approximate settings (vector-index.ts). */
  index?: VectorIndexOptions;
  /** Tells the other nodes of an added or removed entry. */
  publish?: (event: SemanticCacheEvent) => void;
  /** Entries held in memory over all partitions before the least recently used go. Default 100,000. */
  maxEntries?: number;
  /** Milliseconds between sweeps of expired entries (index and store). Default one minute. */
  sweepIntervalMs?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

interface Partition {
  key: string;
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
  /** The request's `max_age`, ms: an older entry does not answer it (it stays for the requests it is
   * young enough for). Unset: any fresh entry answers. */
  maxAgeMs?: number;
  /** The request's vector (unit length), asked only when no entry matches exactly; undefined when it
   * could not be had (the request then misses). */
  embed: () => Promise<Float32Array | undefined>;
}

export type SemanticLookupResult =
  | { kind: 'exact'; entry: SemanticCacheEntry }
  | { kind: 'similar'; entry: SemanticCacheEntry; similarity: number }
  /** `vector` is the request's, to store its answer under; `similarity` the nearest entry's, if any. */
  | { kind: 'miss'; vector: Float32Array | undefined; similarity: number | undefined };

export const DEFAULT_MAX_ENTRIES = 100_000;
/** Entries whose vectors a refresh reads from the store at once, when it compares those not held. */
const UNHELD_PAGE = 500;

export class SemanticCache {
  private readonly partitions = new Map<string, Promise<Partition>>();
  /** The loaded partitions by key, to reach them without waiting. */
  private readonly loaded = new Map<string, Partition>();
  /** Every held entry id → its partition, least recently used first. */
  private readonly recency = new Map<string, Partition>();
  /** Rows being written, by entry id. */
  private readonly writing = new Map<string, Promise<void>>();
  private readonly maxEntries: number;
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
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.sweeper = setInterval(() => void this.sweep(), options.sweepIntervalMs ?? 60_000);
    this.sweeper.unref();
  }

  async lookup(request: SemanticLookup): Promise<SemanticLookupResult> {
    const partition = await this.partition(request.workspaceId, request.partition);
    const now = this.now();
    const exact = partition.exact.get(request.exactKey);
    if (exact && exact.expiresAtMs > now) {
      const entry = await this.readBack(request, exact.id, now);
      if (entry && youngEnough(entry, request, now)) {
        this.touch(entry.id);
        return { kind: 'exact', entry };
      }
    }
    const vector = await request.embed();
    if (!vector) return { kind: 'miss', vector: undefined, similarity: undefined };
    const threshold = request.threshold - SIMILARITY_TOLERANCE;
    const nearest = partition.index?.nearest(vector, this.now(), threshold);
    if (nearest && nearest.similarity >= threshold) {
      const entry = await this.readBack(request, nearest.id, this.now());
      if (entry && youngEnough(entry, request, this.now())) {
        this.touch(entry.id);
        return { kind: 'similar', entry, similarity: nearest.similarity };
      }
    }
    return { kind: 'miss', vector, similarity: nearest?.similarity };
  }

  /**
   * Adds an entry to this node's index, stores it once the current turn is done, then tells the other
   * nodes; rejects (and forgets the entry) when the store refuses it. With `supersedeWithin` (a forced
   * refresh's threshold), the entries its request would have been answered by — of its exact key, or at
   * that similarity or above — are removed once it is stored, so none of them answers in its place.
   */
  async add(entry: SemanticCacheEntry, supersedeWithin?: number): Promise<void> {
    const superseded =
      supersedeWithin === undefined
        ? []
        : await this.answering(entry, supersedeWithin - SIMILARITY_TOLERANCE);
    const written = new Promise<void>((resolve) => setImmediate(resolve)).then(() =>
      this.store.insertSemanticCacheEntry(entry),
    );
    this.writing.set(entry.id, written);
    try {
      await this.addLocally(entry);
      await written;
    } catch (err) {
      this.forget(entry.partition_key, entry.id);
      throw err;
    } finally {
      this.writing.delete(entry.id);
    }
    this.options.publish?.({
      kind: 'semantic-cache',
      op: 'added',
      workspaceId: entry.workspace_id,
      partition: entry.partition_key,
      ids: [entry.id],
    });
    if (superseded.length > 0) await this.removeEntries(entry.workspace_id, superseded);
  }

  /** The entries of the entry's partition that its request would have been answered by. */
  private async answering(entry: SemanticCacheEntry, threshold: number): Promise<string[]> {
    // A refresh looks nothing up: its partition is read here if this node does not hold it yet.
    const partition = await this.partition(entry.workspace_id, entry.partition_key);
    const now = this.now();
    const ids = new Set(partition.index?.within(entry.vector, now, threshold));
    const exact = partition.exact.get(entry.exact_key);
    if (exact) ids.add(exact.id);
    for (const id of await this.answeringUnheld(partition, entry, threshold, now)) ids.add(id);
    ids.delete(entry.id);
    return [...ids];
  }

  /**
   * The entries of the partition that this node does not hold — let go under its memory bound, past the
   * newest `maxEntries` when it was read, or stored by a node it does not hear from — and that the entry's
   * request would have been answered by: they are in the store only, and compared there. Without this,
   * one of them would answer again on a node that holds it, or here once the partition is read afresh.
   * Only their ids are read for the whole partition; their vectors, a page at a time.
   */
  private async answeringUnheld(
    partition: Partition,
    entry: SemanticCacheEntry,
    threshold: number,
    now: number,
  ): Promise<string[]> {
    const stored = await this.store.listSemanticCacheIds(entry.workspace_id, entry.partition_key, now);
    const unheld = stored.filter(
      (id) => id !== entry.id && !partition.exactKeyOf.has(id) && !partition.index?.has(id),
    );
    const found: string[] = [];
    for (let start = 0; start < unheld.length; start += UNHELD_PAGE) {
      const page = unheld.slice(start, start + UNHELD_PAGE);
      for (const other of await this.store.getSemanticCacheVectors(entry.workspace_id, page)) {
        const similar =
          other.vector.length === entry.vector.length && dot(other.vector, entry.vector) >= threshold;
        if (other.exact_key === entry.exact_key || similar) found.push(other.id);
      }
    }
    return found;
  }

  async removeEntry(workspaceId: string, id: string): Promise<boolean> {
    return (await this.removeEntries(workspaceId, [id])) > 0;
  }

  /** Removes these entries (those the store still has); resolves with how many. */
  private async removeEntries(workspaceId: string, ids: string[]): Promise<number> {
    await this.written(ids);
    const removals: SemanticCacheRemoval[] = [];
    for (const id of ids) {
      const removed = await this.store.deleteSemanticCacheEntry(workspaceId, id);
      if (removed) removals.push(removed);
    }
    await this.removed(removals);
    return removals.length;
  }

  /** Removes every entry of a namespace ('' for requests without one); resolves with how many. */
  async removeNamespace(workspaceId: string, namespace: string): Promise<number> {
    await this.written([...this.writing.keys()]);
    const removed = await this.store.deleteSemanticCacheNamespace(workspaceId, namespace);
    await this.removed(removed);
    return removed.length;
  }

  /** Removes every entry of a workspace (it was deleted), from the store and every node's index. */
  async removeWorkspace(workspaceId: string): Promise<number> {
    await this.written([...this.writing.keys()]);
    const removed = await this.store.deleteSemanticCacheWorkspace(workspaceId);
    await this.removed(removed);
    return removed.length;
  }

  /** Another node added or removed entries. */
  async applyRemote(event: SemanticCacheEvent): Promise<void> {
    const loading = this.partitions.get(event.partition);
    if (!loading) return; // Not held here: it is read whole from the store when first asked.
    const partition = await loading;
    if (event.op === 'removed') {
      for (const id of event.ids) this.removeFrom(partition, id);
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
        for (const exact of [...partition.exact.values()]) {
          if (exact.expiresAtMs <= now) this.removeFrom(partition, exact.id);
        }
        if (partition.index) {
          for (const id of partition.index.expired(now)) this.removeFrom(partition, id);
        }
        // An empty partition is read again (cheaply) when next asked.
        if (partition.exact.size === 0 && (partition.index?.size ?? 0) === 0) this.drop(key, partition);
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

  /** Stops the sweeps; resolves once the rows being written are. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.written([...this.writing.keys()]);
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
    const partition: Partition = { key, index: undefined, exact: new Map(), exactKeyOf: new Map() };
    const entries = await this.store.listSemanticCachePartition(
      workspaceId,
      key,
      this.now(),
      this.maxEntries,
    );
    // Held only once whole: a partition dropped meanwhile (emptied, invalidated) is not revived here.
    if (this.partitions.has(key)) {
      this.loaded.set(key, partition);
      for (const entry of entries) this.addTo(partition, entry);
    }
    return partition;
  }

  private async addLocally(entry: Omit<SemanticCacheEntry, 'answer'>): Promise<void> {
    const loading = this.partitions.get(entry.partition_key);
    if (loading) this.addTo(await loading, entry);
  }

  private addTo(partition: Partition, entry: Omit<SemanticCacheEntry, 'answer'>): void {
    addTo(partition, entry, this.options.index);
    this.recency.delete(entry.id);
    this.recency.set(entry.id, partition);
    for (const [id, holder] of this.recency) {
      if (this.recency.size <= this.maxEntries) break;
      this.removeFrom(holder, id);
    }
  }

  /** An entry answered: it is the last to leave memory. */
  private touch(id: string): void {
    const holder = this.recency.get(id);
    if (!holder) return;
    this.recency.delete(id);
    this.recency.set(id, holder);
  }

  private removeFrom(partition: Partition, id: string): void {
    removeFrom(partition, id);
    this.recency.delete(id);
    // A partition that holds nothing any more is read afresh from the store when next asked.
    if (partition.exact.size === 0 && (partition.index?.size ?? 0) === 0) this.drop(partition.key, partition);
  }

  private forget(key: string, id: string): void {
    const partition = this.loaded.get(key);
    if (partition) this.removeFrom(partition, id);
  }

  private drop(key: string, partition: Partition): void {
    if (this.loaded.get(key) !== partition) return;
    this.loaded.delete(key);
    this.partitions.delete(key);
  }

  /** Waits for the rows of these entries being written, whether or not the writes succeed. */
  private async written(ids: string[]): Promise<void> {
    const pending = ids.map((id) => this.writing.get(id)).filter((write) => write !== undefined);
    await Promise.allSettled(pending);
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
        for (const removal of list) this.removeFrom(partition, removal.id);
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
    await this.written([id]);
    const entry = await this.store.getSemanticCacheEntry(request.workspaceId, id);
    if (entry && entry.partition_key === request.partition && entry.expires_at_ms > now) return entry;
    this.forget(request.partition, id);
    return undefined;
  }
}

/** Whether an entry is within the request's `max_age`. */
function youngEnough(entry: SemanticCacheEntry, request: SemanticLookup, now: number): boolean {
  return request.maxAgeMs === undefined || now - entry.created_at_ms < request.maxAgeMs;
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
