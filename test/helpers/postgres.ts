/**
 * The real PostgreSQL for integration tests. Importing this module probes the server once (top-level
 * await), so suites can decide at collection time whether to run:
 *
 *   describeWithPostgres('thing on PostgreSQL', () => { ... use postgresUrl() ... });
 *
 * Without a server the suite is skipped with the reason printed, except under CI=true where a
 * missing server is a failure: a green CI run must mean the PostgreSQL tests ran.
 * Use `freshSchemaName` + `dropSchema` (or the store's `pgSchema`) so parallel runs never collide.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, it } from 'vitest';

const DEFAULT_LOCATION = '127.0.0.1:5432/test';
const PROBE_TIMEOUT_MS = 2_000;

function candidateUrls(): string[] {
  const fromEnv = process.env.TEST_DATABASE_URL;
  if (fromEnv) return [fromEnv];
  return ['postgres', 'root'].map((user) => `postgres://${user}@${DEFAULT_LOCATION}`);
}

type ProbeResult = { ok: true; url: string } | { ok: false; reason: string };

async function probe(): Promise<ProbeResult> {
  const failures: string[] = [];
  for (const url of candidateUrls()) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
    try {
      await client.connect();
      await client.query('select 1');
      return { ok: true, url };
    } catch (error) {
      failures.push(`${redact(url)}: ${(error as Error).message}`);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return { ok: false, reason: `PostgreSQL is not reachable (${failures.join('; ')})` };
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

const probed: ProbeResult = await probe();

/** The URL of the reachable server (the first candidate when none is reachable). */
export function postgresUrl(): string {
  return probed.ok ? probed.url : candidateUrls()[0];
}

export async function postgresAvailable(): Promise<boolean> {
  return probed.ok;
}

/** Why PostgreSQL tests do not run, or undefined when they do. */
export function postgresUnavailableReason(): string | undefined {
  return probed.ok ? undefined : probed.reason;
}

export function describeWithPostgres(name: string, fn: () => void): void {
  if (probed.ok) {
    describe(name, fn);
    return;
  }
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('needs PostgreSQL', () => {
        throw new Error(`${probed.reason}; CI=true, so this is a failure, not a skip`);
      });
    });
    return;
  }
  console.warn(`Skipping "${name}": ${probed.reason}`);
  describe.skip(name, fn);
}

/** A schema name unique to this run, e.g. `t_store_lq2x9k_3f9a1c`. */
export function freshSchemaName(prefix: string): string {
  const safePrefix = prefix.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  return `t_${safePrefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl() });
  await client.connect();
  try {
    await client.query(`drop schema if exists ${pg.escapeIdentifier(schema)} cascade`);
  } finally {
    await client.end();
  }
}
