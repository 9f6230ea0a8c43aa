/**
 * SharedState in process memory, for a single gateway node. Entries expire lazily on access and in a
 * periodic sweep; the number of keys is bounded, and when full the oldest written keys go first
 * (expired ones before any live one).
 */
import { checkAmount, checkTtl, type SharedState } from './types.js';

export interface MemoryStateOptions {
  /** Upper bound of live keys. Default 100 000. */
  maxKeys?: number;
  /** How often expired keys are swept, ms. Default 60 000. */
  sweepIntervalMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

interface Entry {
  value: string | Buffer;
  expiresAt: number | undefined;
}

const DEFAULT_MAX_KEYS = 100_000;
const DEFAULT_SWEEP_INTERVAL_MS = 60_000;
const INTEGER = /^-?\d+$/;

export class MemoryState implements SharedState {
  readonly kind = 'memory' as const;
  private readonly entries = new Map<string, Entry>();
  private readonly maxKeys: number;
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(options: MemoryStateOptions = {}) {
    this.maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
    if (!Number.isInteger(this.maxKeys) || this.maxKeys < 1) throw new RangeError('maxKeys must be ≥ 1');
    this.now = options.now ?? Date.now;
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  /** Live keys right now (expired ones not yet swept are not counted). */
  get size(): number {
    this.sweep();
    return this.entries.size;
  }

  async get(key: string): Promise<string | undefined> {
    const entry = this.live(key);
    if (entry === undefined) return undefined;
    return typeof entry.value === 'string' ? entry.value : entry.value.toString('utf8');
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.write(key, value, expiry(this.now(), checkTtl(ttlMs)));
  }

  async setIfAbsent(key: string, value: string, ttlMs?: number): Promise<boolean> {
    const expiresAt = expiry(this.now(), checkTtl(ttlMs));
    if (this.live(key) !== undefined) return false;
    this.write(key, value, expiresAt);
    return true;
  }

  async deleteIfEquals(key: string, expected: string): Promise<boolean> {
    const current = await this.get(key);
    if (current !== expected) return false;
    this.entries.delete(key);
    return true;
  }

  async del(key: string): Promise<void> {
    this.assertOpen();
    this.entries.delete(key);
  }

  async deletePrefixed(prefix: string): Promise<number> {
    this.assertOpen();
    let deleted = 0;
    for (const key of this.entries.keys()) {
      if (key.startsWith(prefix) && this.entries.delete(key)) deleted++;
    }
    return deleted;
  }

  async incr(key: string, ttlMs?: number): Promise<number> {
    return this.incrBy(key, 1, ttlMs);
  }

  async incrBy(key: string, amount: number, ttlMs?: number): Promise<number> {
    checkAmount(amount);
    const ttl = checkTtl(ttlMs);
    const entry = this.live(key);
    if (entry === undefined) {
      this.write(key, String(amount), expiry(this.now(), ttl));
      return amount;
    }
    const text = typeof entry.value === 'string' ? entry.value : entry.value.toString('utf8');
    const current = INTEGER.test(text) ? Number(text) : NaN;
    if (!Number.isSafeInteger(current) || !Number.isSafeInteger(current + amount)) {
      throw new Error(`value at ${key} is not an integer or out of range`);
    }
    entry.value = String(current + amount);
    return current + amount;
  }

  async ttl(key: string): Promise<number | undefined> {
    const entry = this.live(key);
    if (entry?.expiresAt === undefined) return undefined;
    return Math.max(1, entry.expiresAt - this.now());
  }

  async getBuffer(key: string): Promise<Buffer | undefined> {
    const entry = this.live(key);
    if (entry === undefined) return undefined;
    // A copy: callers must not be able to change what is stored.
    return typeof entry.value === 'string' ? Buffer.from(entry.value, 'utf8') : Buffer.from(entry.value);
  }

  async setBuffer(key: string, value: Buffer, ttlMs?: number): Promise<void> {
    this.write(key, Buffer.from(value), expiry(this.now(), checkTtl(ttlMs)));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    this.entries.clear();
  }

  destroy(): void {
    void this.close();
  }

  private live(key: string): Entry | undefined {
    this.assertOpen();
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt !== undefined && entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private write(key: string, value: string | Buffer, expiresAt: number | undefined): void {
    this.assertOpen();
    // Re-inserting moves the key to the young end of the eviction order.
    this.entries.delete(key);
    if (this.entries.size >= this.maxKeys) this.makeRoom();
    this.entries.set(key, { value, expiresAt });
  }

  private makeRoom(): void {
    this.sweep();
    for (const oldest of this.entries.keys()) {
      if (this.entries.size < this.maxKeys) break;
      this.entries.delete(oldest);
    }
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt !== undefined && entry.expiresAt <= now) this.entries.delete(key);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('shared state is closed');
  }
}

function expiry(now: number, ttlMs: number | undefined): number | undefined {
  return ttlMs === undefined ? undefined : now + ttlMs;
}
