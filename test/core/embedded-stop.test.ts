/**
 * A gateway embedded in another process (createGatewayServer), stopped by its close() while its store and
 * Redis no longer answer: the closes that do not end in their share (stop-closes.ts) are torn down, their
 * connections destroyed, rather than left open in a process that goes on. The store is PostgreSQL, Redis
 * is Redis, each reached through a proxy that can stop carrying anything (a partition: the connections stay
 * open, nothing comes back, not even to their close).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { redisUrl } from '../helpers/redis.js';
import { startStallingProxy, throughProxy, type StallingProxy } from '../helpers/stalling-proxy.js';

/** Resolves when this process's HTTP server begins a request whose path ends with `path` (Node's diagnostics channel). */
function requestStarted(path: string): Promise<void> {
  return new Promise((done) => {
    const onStart = (message: unknown) => {
      if (!(message as { request: IncomingMessage }).request.url?.endsWith(path)) return;
      unsubscribe('http.server.request.start', onStart);
      done();
    };
    subscribe('http.server.request.start', onStart);
  });
}

describeWithPostgres('an embedded gateway stopped while its store and Redis do not answer', () => {
  const schema = freshSchemaName('embedded_stop');
  let pgProxy: StallingProxy;
  let redisProxy: StallingProxy;
  let gateway: TestGateway | undefined;

  beforeAll(async () => {
    pgProxy = await startStallingProxy(new URL(postgresUrl()), 5432);
    redisProxy = await startStallingProxy(new URL(redisUrl()), 6379);
  });
  afterAll(async () => {
    await pgProxy?.close();
    await redisProxy?.close();
    if (gateway) rmSync(gateway.dataDir, { recursive: true, force: true });
    await dropSchema(schema);
  });

  it('tears down the closes that did not end in time: no connection of theirs is left open', async () => {
    gateway = await startGateway({
      postgres: { url: throughProxy(postgresUrl(), pgProxy).toString(), schema },
      env: { REDIS_URL: throughProxy(redisUrl(), redisProxy).toString(), GATEWAY_SHUTDOWN_GRACE_MS: '1000' },
    });
    expect(pgProxy.openFromGateway()).toBeGreaterThan(0);
    expect(redisProxy.openFromGateway()).toBeGreaterThan(0);
    pgProxy.stall();
    redisProxy.stall();
    // A request whose store query is under way when the stop begins: the store's close waits for its
    // connection, which never comes back. The stop begins once the request has reached the gateway and
    // its query the store's proxy (on a busy machine, a fixed wait could begin it before the request came,
    // which the stopping gateway then refuses with a 503).
    const arrived = requestStarted('/logs');
    const held = fetch(`${gateway.url}/logs`, { headers: { 'x-gateway-api-key': gateway.adminKey } }).then(
      (response) => response.status,
      () => 'cut',
    );
    await arrived;
    const heldBefore = pgProxy.heldFromGateway();
    for (let i = 0; i < 400 && pgProxy.heldFromGateway() === heldBefore; i++) {
      await new Promise((done) => setTimeout(done, 25));
    }
    expect(pgProxy.heldFromGateway()).toBeGreaterThan(heldBefore);
    const started = Date.now();
    await gateway.server.close();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await held).toBe('cut');
    // The connections' ends reach the proxies at once; a moment for the loop to take them in.
    for (let i = 0; i < 20 && pgProxy.openFromGateway() + redisProxy.openFromGateway() > 0; i++) {
      await new Promise((done) => setTimeout(done, 25));
    }
    expect({ store: pgProxy.openFromGateway(), redis: redisProxy.openFromGateway() }).toEqual({
      store: 0,
      redis: 0,
    });
  }, 30_000);
});
