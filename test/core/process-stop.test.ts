/**
 * The gateway process's stop (src/main.ts) on SIGTERM: it exits 0 soon when its store answers, and when its
 * store and Redis do not, each of their closes is given its share of what is left of
 * GATEWAY_SHUTDOWN_GRACE_MS, named in the log when it runs out, and the stop goes on with the rest, rather
 * than wait for the overrun's exit (G + STOP_OVERRUN_MS) or the orchestrator's kill; a job cut whose giving
 * back the store does not answer is left in the same way, and a process held past its cut (busy, or starved
 * of CPU) still ends before that exit. The store is
 * PostgreSQL, and Redis is Redis, each reached through a proxy that can stop carrying anything (a
 * partition: the connections stay open, nothing comes back, not even to their close).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { STOP_OVERRUN_MS } from '../../src/stop-plan.js';
import { freePort } from '../helpers/free-port.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { redisUrl } from '../helpers/redis.js';
import { startSilentProvider } from '../helpers/silent-provider.js';
import { startStallingProxy, throughProxy, type StallingProxy } from '../helpers/stalling-proxy.js';

const root = resolve(import.meta.dirname, '../..');
const graceMs = 1000;

describeWithPostgres('the gateway process stopped by SIGTERM', () => {
  const schema = freshSchemaName('process_stop');
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-stop-'));
  let databaseUrl: string;
  let proxy: StallingProxy;
  let redisProxy: StallingProxy;
  let proxiedRedisUrl: string;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    // The process takes its schema from the URL: the search path of every connection, made beforehand.
    const client = new pg.Client({ connectionString: postgresUrl() });
    await client.connect();
    try {
      await client.query(`create schema ${pg.escapeIdentifier(schema)}`);
    } finally {
      await client.end();
    }
    proxy = await startStallingProxy(new URL(postgresUrl()), 5432);
    const url = throughProxy(postgresUrl(), proxy);
    url.searchParams.set('options', `-c search_path=${schema}`);
    databaseUrl = url.toString();
    redisProxy = await startStallingProxy(new URL(redisUrl()), 6379);
    proxiedRedisUrl = throughProxy(redisUrl(), redisProxy).toString();
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await proxy?.close();
    await redisProxy?.close();
    await dropSchema(schema);
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Starts `src/main.ts` and waits until it answers /health; what it writes is kept. */
  async function startProcess(
    env: Record<string, string> = {},
    nodeArgs: string[] = [],
  ): Promise<{
    node: ChildProcess;
    origin: string;
    adminKey: string;
    output: () => string;
  }> {
    const port = await freePort();
    const adminKey = `gw-stop-${randomBytes(12).toString('hex')}`;
    const origin = `http://127.0.0.1:${port}`;
    const node = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        GATEWAY_DATA_DIR: dataDir,
        GATEWAY_ADMIN_KEY: adminKey,
        GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
        DATABASE_URL: databaseUrl,
        REDIS_URL: '',
        LOG_LEVEL: 'info',
        GATEWAY_SHUTDOWN_GRACE_MS: String(graceMs),
        GATEWAY_BATCH_POLL_MS: '50',
        ...env,
      },
    });
    child = node;
    let output = '';
    node.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000)));
    node.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000)));
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (node.exitCode !== null) throw new Error(`the gateway exited: ${output}`);
      const ok = await fetch(`${origin}/health`).then(
        (response) => response.ok,
        () => false,
      );
      if (ok) return { node, origin, adminKey, output: () => output };
      await new Promise((done) => setTimeout(done, 100));
    }
    node.kill('SIGKILL');
    throw new Error(`the gateway did not become healthy: ${output}`);
  }

  /** Sends SIGTERM; the exit status and how long after the signal it came. A process still there well
   * past its overrun is killed, its status then `hung`. */
  async function terminate(node: ChildProcess): Promise<{ code: number | 'hung' | null; tookMs: number }> {
    const exited = new Promise<number | null>((done) => node.once('exit', (code) => done(code)));
    const sent = Date.now();
    node.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<'hung'>((done) => {
      timer = setTimeout(done, graceMs + STOP_OVERRUN_MS + 5000, 'hung');
    });
    const code = await Promise.race([exited, hung]);
    clearTimeout(timer);
    const tookMs = Date.now() - sent;
    if (code === 'hung') {
      node.kill('SIGKILL');
      await exited;
    }
    return { code, tookMs };
  }

  /** The process exited 0 by itself, well before the overrun's exit (graceMs + STOP_OVERRUN_MS). */
  function expectStoppedInBounds(
    stopped: { code: number | 'hung' | null; tookMs: number },
    output: string,
  ): void {
    expect(stopped.code, output).toBe(0);
    expect(output).not.toContain('shutdown overran its grace period');
    expect(stopped.tookMs).toBeLessThan(graceMs + STOP_OVERRUN_MS - 500);
  }

  interface HangingCallSetting {
    /** The store through a proxy of its own: the one the tests before stalled carries nothing any more. */
    databaseUrl: string;
    storeProxy: StallingProxy;
    /** POSTs `body` to the process's `path`, sent to the silent provider. */
    post(started: { origin: string; adminKey: string }, path: string, body: object): Promise<Response>;
    /** The requests the provider has taken, once it has taken one (or after 10 s). */
    reached(): Promise<string[]>;
  }

  /** Runs `test` with a provider that takes every request and never answers it (a call to it is under way
   * until the cut) and a store proxy of its own; closes both after. */
  async function withSilentProvider(test: (provider: HangingCallSetting) => Promise<void>): Promise<void> {
    const silent = await startSilentProvider();
    let storeProxy: StallingProxy | undefined;
    try {
      storeProxy = await startStallingProxy(new URL(postgresUrl()), 5432);
      await test({
        databaseUrl: throughProxy(databaseUrl, storeProxy).toString(),
        storeProxy,
        post: ({ origin, adminKey }, path, body) =>
          fetch(`${origin}${path}`, {
            method: 'POST',
            headers: {
              'x-gateway-api-key': adminKey,
              'x-gateway-provider': 'openai',
              'x-gateway-custom-host': silent.url,
              authorization: 'Bearer sk-stop',
              'content-type': 'application/json',
            },
            body: JSON.stringify(body),
          }),
        reached: () => silent.taken(),
      });
    } finally {
      await silent.close();
      await storeProxy?.close();
    }
  }

  it('exits 0 soon after SIGTERM when its store answers', async () => {
    const { node, output } = await startProcess();
    const { code, tookMs } = await terminate(node);
    expect(code, output()).toBe(0);
    expect(tookMs).toBeLessThan(graceMs + 1500);
    // Its store went to the test's own schema, not the database's public one.
    const client = new pg.Client({ connectionString: postgresUrl() });
    await client.connect();
    try {
      const { rows } = await client.query<{ count: string }>(
        'select count(*) from information_schema.tables where table_schema = $1',
        [schema],
      );
      expect(Number(rows[0].count)).toBeGreaterThan(0);
    } finally {
      await client.end();
    }
  }, 60_000);

  it('exits 0 within its bounds when its store and Redis stop answering, naming what did not close', async () => {
    const { node, origin, adminKey, output } = await startProcess({ REDIS_URL: proxiedRedisUrl });
    proxy.stall();
    redisProxy.stall();
    // A request whose store query is under way when the stop begins: the store's close waits for its
    // connection, which never comes back. (With every connection idle, closing the pool does not wait.)
    const held = fetch(`${origin}/v1/logs`, { headers: { 'x-gateway-api-key': adminKey } }).then(
      (response) => response.status,
      () => 'cut',
    );
    await new Promise((done) => setTimeout(done, 300));
    const stopped = await terminate(node);
    // Its connection was closed at the cut, before any answer.
    expect(await held).toBe('cut');
    // The final writes take 1 s at least, the closes 0.5 s at least, when the grace period is shorter.
    expectStoppedInBounds(stopped, output());
    // The store, and a client of Redis (which of them waits for its reply depends on when the stall caught it).
    expect(output()).toMatch(/"part":"store"[^\n]*did not close in time/);
    expect(output()).toMatch(/"part":"[^"]*\(Redis\)"[^\n]*did not close in time/);
  }, 60_000);

  it('exits 0 when its cut comes late, a call cut then and the store not answering', async () => {
    await withSilentProvider(async (provider) => {
      // The process is held (busy, or starved of CPU) from before its cut, planned at 0.8 s, until
      // 2.6 s: its cut comes then, 1.6 s past the grace period.
      const holdLoop =
        "process.on('SIGTERM', () => setTimeout(() => { const until = Date.now() + 1900; " +
        'while (Date.now() < until); }, 700));';
      const started = await startProcess({ DATABASE_URL: provider.databaseUrl }, [
        '--import',
        `data:text/javascript,${encodeURIComponent(holdLoop)}`,
      ]);
      const call = provider
        .post(started, '/v1/chat/completions', {
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'Hang' }],
        })
        .then(
          (response) => response.status,
          () => 'cut',
        );
      expect(await provider.reached()).toEqual(['POST /chat/completions']);
      provider.storeProxy.stall();
      const stopped = await terminate(started.node);
      expect(await call).toBe('cut');
      // What follows a cut that late is shortened to end 2 s past the grace period at the latest.
      expectStoppedInBounds(stopped, started.output());
      // The call's record could not be written, and the log says so.
      expect(started.output()).toContain('log records not written before the stop ran out of time');
    });
  }, 60_000);

  it('exits 0 within its bounds when the store stops answering while a job it cut is given back', async () => {
    await withSilentProvider(async (provider) => {
      const started = await startProcess({ DATABASE_URL: provider.databaseUrl });
      const created = await provider.post(started, '/v1/responses', {
        model: 'gpt-4o-mini',
        input: 'Hang',
        background: true,
      });
      expect(created.status, await created.clone().text()).toBe(200);
      expect(await provider.reached()).toEqual(['POST /responses']);
      provider.storeProxy.stall();
      const stopped = await terminate(started.node);
      expectStoppedInBounds(stopped, started.output());
      expect(started.output()).toContain('shutdown: the work cut was not given back in time');
    });
  }, 60_000);
});
