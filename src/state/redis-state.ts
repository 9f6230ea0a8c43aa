/**
 * SharedState in Redis, shared by every gateway node. Every key is stored under a prefix, so several
 * gateways (or test runs) can share one Redis. Compound operations run as Lua scripts, so they are
 * atomic across nodes.
 */
import { createHash } from 'node:crypto';
import { Command, Redis, type RedisOptions } from 'ioredis';
import { checkAmount, checkTtl, ScriptNotSentError, type ScriptingState, type StateScript } from './types.js';

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
  /** The SHA-1 of each script sent once, by name. */
  private readonly hashes = new Map<string, string>();

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

  /**
   * Scripts are sent straight to the client, not through the automatic pipeline (which sends a tick later,
   * or later still behind a pipeline waiting for its replies), so that the scripts of this node reach Redis
   * in the order they were run: a rate-limit take run only when connected must not pass a lease given back
   * just before it. A script is sent whole the first time, then by its hash; one Redis no longer knows (it
   * restarted) is refused without being run, and is sent whole again.
   */
  runScript(
    script: StateScript,
    keys: readonly string[],
    args: ReadonlyArray<string | number>,
  ): Promise<unknown> {
    const send = (name: 'evalsha' | 'eval', body: string): Promise<unknown> => {
      // Checked in the same step as the send, as the client checks it: a command goes to its offline queue
      // unless it is ready and its stream writable.
      if (script.whenConnected && !this.connected()) {
        return Promise.reject(
          new ScriptNotSentError(`Redis is not connected (${this.client.status}): ${script.name} not sent`),
        );
      }
      const command = new Command(name, [body, keys.length, ...keys.map((key) => this.k(key)), ...args], {
        replyEncoding: 'utf8',
      });
      void this.client.sendCommand(command);
      return command.promise;
    };
    const sha = this.hashes.get(script.name);
    if (sha === undefined) {
      this.hashes.set(script.name, createHash('sha1').update(script.lua).digest('hex'));
      return send('eval', script.lua);
    }
    return send('evalsha', sha).catch((error: unknown) => {
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
      return send('eval', script.lua);
    });
  }

  /**
   * Resolves once the client's first connection is ready, or as soon as it could not be made (Redis down at
   * the start: the client goes on connecting by itself). A script run only when connected fails while the
   * client is still connecting: waiting for this first, a node started beside a running Redis does not
   * apply the rate limits' fail mode to its first calls.
   */
  firstConnection(): Promise<void> {
    if (
      this.client.status !== 'wait' &&
      this.client.status !== 'connecting' &&
      this.client.status !== 'connect'
    ) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const events = ['ready', 'close', 'end'] as const;
      const done = () => {
        for (const event of events) this.client.off(event, done);
        resolve();
      };
      for (const event of events) this.client.once(event, done);
    });
  }

  /** Whether a command sent now is written to the connection rather than queued (ioredis sendCommand). */
  private connected(): boolean {
    return this.client.status === 'ready' && this.client.stream?.writable === true;
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
