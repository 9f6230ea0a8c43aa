/**
 * The fast shared state: counters, circuit breakers and cache entries. One interface, two
 * implementations: in-process memory (one node) and Redis (many nodes). Both pass the same contract
 * suite (test/state/shared-state.test.ts).
 *
 * Time-to-live values are milliseconds: a positive finite number (fractions round up). Omitting it
 * means the key does not expire. A non-positive or non-finite TTL is a programming error and throws
 * a RangeError, in both implementations.
 */

export interface SharedState {
  readonly kind: 'memory' | 'redis';

  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Stores `value` only when `key` holds nothing; true when this call stored it. Atomic. */
  setIfAbsent(key: string, value: string, ttlMs?: number): Promise<boolean>;
  /** Deletes `key` only when it holds `expected`; true when this call deleted it. Atomic. */
  deleteIfEquals(key: string, expected: string): Promise<boolean>;
  del(key: string): Promise<void>;
  /** Deletes every key that starts with `prefix` (not atomic: a key written meanwhile may stay); resolves
   * with how many went. Walks the whole keyspace: for rare clean-ups, never a request's path. */
  deletePrefixed(prefix: string): Promise<number>;

  /**
   * Adds 1 to the integer at `key` (missing → 0) and returns the new value. Atomic. `ttlMs` is applied
   * only when this call creates the key, so a window counter expires at the end of its window.
   */
  incr(key: string, ttlMs?: number): Promise<number>;
  /** As `incr`, by any integer amount (e.g. token counts). */
  incrBy(key: string, amount: number, ttlMs?: number): Promise<number>;

  /** Milliseconds until `key` expires; undefined when it is missing or never expires. */
  ttl(key: string): Promise<number | undefined>;

  getBuffer(key: string): Promise<Buffer | undefined>;
  setBuffer(key: string, value: Buffer, ttlMs?: number): Promise<void>;

  /** Releases connections and timers. Further calls fail. */
  close(): Promise<void>;
  /** Ends at once what `close` waits for, its connections destroyed: for a stop whose close did not end in
   * time (Redis no longer answers), in a process that goes on. */
  destroy(): void;
}

/** A Lua script, run atomically by Redis; `name` identifies it (it is loaded once, then run by its hash). */
export interface StateScript {
  name: string;
  lua: string;
  /**
   * Sent at once or not at all: while the connection is down (or not yet ready) the run fails at once,
   * rather than wait in the client's queue to be sent once Redis is back, long after its caller gave up on
   * it (a rate-limit check, whose call was decided without it, would be charged then; a settlement or a
   * give-back, reported as not made, would move a counter that has moved on).
   */
  whenConnected?: boolean;
}

/** A script run only when connected, refused because the connection was not ready: never sent, so it
 * certainly did not run. */
export class ScriptNotSentError extends Error {
  override name = 'ScriptNotSentError';
}

/**
 * Whether a script whose run failed may have run to its end all the same: its answer was lost (the
 * connection closed after it was sent, or the wait for it timed out). Not when it was never sent
 * (ScriptNotSentError), nor when Redis answered it with an error (ioredis's ReplyError: refused before it
 * ran, or stopped partway by an error, such as a write refused for memory under `noeviction`, after which
 * what it wrote before stands, since Redis does not roll a script back).
 */
export function answerLost(error: unknown): boolean {
  // By its name, not `instanceof`: importing ioredis's class here would load the Redis client in every
  // process, embedded ones included, which never load it (test/review/embedded-start-modules.test.ts).
  const answered = error instanceof Error && error.name === 'ReplyError';
  return !(error instanceof ScriptNotSentError) && !answered;
}

/** Shared state that runs scripts: Redis. Keys are given without the state's prefix, as everywhere. */
export interface ScriptingState extends SharedState {
  runScript(
    script: StateScript,
    keys: readonly string[],
    args: ReadonlyArray<string | number>,
  ): Promise<unknown>;
}

export function runsScripts(state: SharedState): state is ScriptingState {
  return typeof (state as Partial<ScriptingState>).runScript === 'function';
}

/** Normalises a TTL argument: undefined stays undefined, else a positive whole number of ms. */
export function checkTtl(ttlMs: number | undefined): number | undefined {
  if (ttlMs === undefined) return undefined;
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new RangeError(`ttlMs must be a positive number of milliseconds, got ${ttlMs}`);
  }
  return Math.ceil(ttlMs);
}

export function checkAmount(amount: number): number {
  if (!Number.isSafeInteger(amount)) throw new RangeError(`amount must be a safe integer, got ${amount}`);
  return amount;
}
