/**
 * The real Redis for integration tests. Importing this module probes the server once (top-level
 * await), so suites can decide at collection time whether to run:
 *
 *   describeWithRedis('thing on Redis', () => { ... use redisUrl() and freshRedisPrefix() ... });
 *
 * Without a server the suite is skipped with the reason printed, except under CI=true where a missing
 * server is a failure: a green CI run must mean the Redis tests ran. Give every run its own key prefix
 * (`freshRedisPrefix`) and remove its keys afterwards (`deleteRedisKeys`).
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, it } from 'vitest';

const DEFAULT_URL = 'redis://127.0.0.1:6379';
const PROBE_TIMEOUT_MS = 2_000;

type ProbeResult = { ok: true } | { ok: false; reason: string };

export function redisUrl(): string {
  return process.env.TEST_REDIS_URL || DEFAULT_URL;
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

function connect(): Redis {
  return new Redis(redisUrl(), {
    lazyConnect: true,
    connectTimeout: PROBE_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
}

async function probe(): Promise<ProbeResult> {
  const client = connect();
  // The connection error arrives as an event; the rejected promise only says the connection closed.
  let cause: Error | undefined;
  client.on('error', (error: Error) => {
    cause ??= error;
  });
  try {
    await client.connect();
    await client.ping();
    return { ok: true };
  } catch (error) {
    const message = (cause ?? (error as Error)).message;
    return { ok: false, reason: `Redis is not reachable at ${redact(redisUrl())}: ${message}` };
  } finally {
    client.disconnect();
  }
}

const probed: ProbeResult = await probe();

export async function redisAvailable(): Promise<boolean> {
  return probed.ok;
}

/** Why Redis tests do not run, or undefined when they do. */
export function redisUnavailableReason(): string | undefined {
  return probed.ok ? undefined : probed.reason;
}

export function describeWithRedis(name: string, fn: () => void): void {
  if (probed.ok) {
    describe(name, fn);
    return;
  }
  const reason = probed.reason;
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('needs Redis', () => {
        throw new Error(`${reason}; CI=true, so this is a failure, not a skip`);
      });
    });
    return;
  }
  console.warn(`Skipping "${name}": ${reason}`);
  describe.skip(name, fn);
}

/** A key prefix unique to this run, e.g. `test:state:lq2x9k:3f9a1c:`. */
export function freshRedisPrefix(label: string): string {
  const safe = label.toLowerCase().replace(/[^a-z0-9_-]/g, '_');
  return `test:${safe}:${Date.now().toString(36)}:${randomBytes(3).toString('hex')}:`;
}

/** The settings that put a gateway on the test Redis under `prefix`. */
export function redisEnv(prefix: string): { REDIS_URL: string; GATEWAY_REDIS_PREFIX: string } {
  return { REDIS_URL: redisUrl(), GATEWAY_REDIS_PREFIX: prefix };
}

/** Every key under `prefix` (glob characters in the prefix are escaped). */
export async function listRedisKeys(prefix: string): Promise<string[]> {
  const client = connect();
  try {
    await client.connect();
    const found: string[] = [];
    const stream = client.scanStream({ match: `${escapeGlob(prefix)}*`, count: 500 });
    for await (const batch of stream) found.push(...(batch as string[]));
    return found;
  } finally {
    client.disconnect();
  }
}

/** Deletes every key under `prefix`; returns how many there were. */
export async function deleteRedisKeys(prefix: string): Promise<number> {
  const keys = await listRedisKeys(prefix);
  if (keys.length === 0) return 0;
  const client = connect();
  try {
    await client.connect();
    for (let i = 0; i < keys.length; i += 500) await client.del(...keys.slice(i, i + 500));
    return keys.length;
  } finally {
    client.disconnect();
  }
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
