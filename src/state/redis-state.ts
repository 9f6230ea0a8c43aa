/**
 * SharedState in Redis, shared by every gateway node. Every key is stored under a prefix, so several
 * gateways (or test runs) can share one Redis. Compound operations run as Lua scripts, so they are
 * atomic across nodes.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { checkAmount, checkTtl, type ScriptingState, type StateScript } from './types.js';

export interface RedisStateOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…`. */
  url: string;
  /** Put in front of every key, e.g. `gateway:`. */
  prefix: string;
  /**
   * How long a command waits for its reply before it fails with "Command timed out". Without it, a Redis
   * that stops answering while its connection stays open (a partition, a blocked server) holds every
   * caller for as long as it lasts; with it each caller's own failure rule applies (a cache read is a miss,
   * the breaker fails open, rate limits apply their fail mode). Default DEFAULT_COMMAND_TIMEOUT_MS.
   */
  commandTimeoutMs?: number;
  /** Called on connection errors (the client reconnects by itself). */
  onError?: (error: Error) => void;
  /** Extra ioredis options. */
  redisOptions?: RedisOptions;
}

const INCR_BY = `
local created = redis.call('EXISTS', KEYS[1]) == 0
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if created and ARGV[2] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return value`;

const DELETE_IF_EQUALS = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export const DEFAULT_COMMAND_TIMEOUT_MS = 1_000;

/** The text as a SCAN pattern that matches it literally. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

interface Scripts {
  gatewayIncrBy(key: string, amount: number, ttlMs: string): Promise<number>;
  gatewayDeleteIfEquals(key: string, expected: string): Promise<number>;
}

export class RedisState implements ScriptingState {
  readonly kind = 'redis' as const;
  readonly prefix: string;
  private readonly client: Redis & Scripts;
  private readonly defined = new Set<string>();

  constructor(options: RedisStateOptions) {
    this.prefix = options.prefix;
    const client = new Redis(options.url, {
      // A gateway request must fail fast, not wait out a long reconnect loop.
      maxRetriesPerRequest: 2,
      connectTimeout: 5_000,
      commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      // Commands issued in the same tick share one round trip (the breaker and cache issue several).
      enableAutoPipelining: true,
      // A command whose connection was lost before its reply may already have run: sent again on the next
      // connection, a rate-limit take or settlement (or any increment) would count twice, and one its caller
      // gave up on long before would run when Redis came back. Unanswered, it fails by the command timeout,
      // and each caller's own failure rule applies, as for any command Redis did not answer.
      autoResendUnfulfilledCommands: false,
      ...options.redisOptions,
    });
    client.on('error', options.onError ?? (() => undefined));
    client.defineCommand('gatewayIncrBy', { numberOfKeys: 1, lua: INCR_BY });
    client.defineCommand('gatewayDeleteIfEquals', { numberOfKeys: 1, lua: DELETE_IF_EQUALS });
    this.client = client as Redis & Scripts;
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.client.get(this.k(key))) ?? undefined;
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    await this.write(key, value, checkTtl(ttlMs));
  }

  async setIfAbsent(key: string, value: string, ttlMs?: number): Promise<boolean> {
    const ttl = checkTtl(ttlMs);
    const reply =
      ttl === undefined
        ? await this.client.set(this.k(key), value, 'NX')
        : await this.client.set(this.k(key), value, 'PX', ttl, 'NX');
    return reply === 'OK';
  }

  async deleteIfEquals(key: string, expected: string): Promise<boolean> {
    return (await this.client.gatewayDeleteIfEquals(this.k(key), expected)) === 1;
  }

  async del(key: string): Promise<void> {
    await this.client.del(this.k(key));
  }

  async deletePrefixed(prefix: string): Promise<number> {
    // SCAN walks the keyspace a page at a time, so Redis is never held as KEYS would hold it.
    const pages = this.client.scanStream({ match: `${escapeGlob(this.k(prefix))}*`, count: 500 });
    let deleted = 0;
    for await (const keys of pages as AsyncIterable<string[]>) {
      if (keys.length > 0) deleted += await this.client.unlink(...keys);
    }
    return deleted;
  }

  async incr(key: string, ttlMs?: number): Promise<number> {
    return this.incrBy(key, 1, ttlMs);
  }

  async incrBy(key: string, amount: number, ttlMs?: number): Promise<number> {
    checkAmount(amount);
    const ttl = checkTtl(ttlMs);
    return Number(await this.client.gatewayIncrBy(this.k(key), amount, ttl === undefined ? '' : String(ttl)));
  }

  async ttl(key: string): Promise<number | undefined> {
    const ms = await this.client.pttl(this.k(key));
    return ms >= 0 ? Math.max(1, ms) : undefined;
  }

  async getBuffer(key: string): Promise<Buffer | undefined> {
    return (await this.client.getBuffer(this.k(key))) ?? undefined;
  }

  async setBuffer(key: string, value: Buffer, ttlMs?: number): Promise<void> {
    await this.write(key, value, checkTtl(ttlMs));
  }

  async runScript(
    script: StateScript,
    keys: readonly string[],
    args: ReadonlyArray<string | number>,
  ): Promise<unknown> {
    if (!this.defined.has(script.name)) {
      // Without numberOfKeys, the command takes the number of keys as its first argument.
      this.client.defineCommand(script.name, { lua: script.lua });
      this.defined.add(script.name);
    }
    const command = (this.client as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[
      script.name
    ];
    return command.call(this.client, keys.length, ...keys.map((key) => this.k(key)), ...args);
  }

  async close(): Promise<void> {
    if (this.client.status === 'end') return;
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }

  destroy(): void {
    this.client.disconnect();
  }

  private async write(key: string, value: string | Buffer, ttl: number | undefined): Promise<void> {
    if (ttl === undefined) await this.client.set(this.k(key), value);
    else await this.client.set(this.k(key), value, 'PX', ttl);
  }

  private k(key: string): string {
    return this.prefix + key;
  }
}
