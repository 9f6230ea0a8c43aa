/**
 * Store reads shared by key: the callers asking for a key while its read is under way, or kept, get that
 * read's promise rather than make their own. A read that fails is not kept (the store dropped a
 * connection): kept, it would fail every later caller of its key for as long as it was kept. With
 * `maxAgeMs`, a read is kept that long from when it began, then made again: timed by performance.now(),
 * which only moves forward (by Date.now(), a clock set back would keep a read until it caught up).
 */
export class SharedReads<K, V> {
  private readonly reads = new Map<K, { at: number; value: Promise<V> }>();

  constructor(private readonly maxAgeMs = Number.POSITIVE_INFINITY) {}

  /** The kept read of `key`, or the one `read` makes now. */
  get(key: K, read: () => Promise<V>): Promise<V> {
    const kept = this.reads.get(key);
    if (kept && performance.now() - kept.at < this.maxAgeMs) return kept.value;
    const made = { at: performance.now(), value: read() };
    this.reads.set(key, made);
    made.value.catch(() => {
      if (this.reads.get(key) === made) this.reads.delete(key);
    });
    return made.value;
  }

  delete(key: K): void {
    this.reads.delete(key);
  }

  /** Drops the reads of the keys `which` picks. */
  forget(which: (key: K) => boolean): void {
    for (const key of this.reads.keys()) if (which(key)) this.reads.delete(key);
  }

  keys(): IterableIterator<K> {
    return this.reads.keys();
  }
}
