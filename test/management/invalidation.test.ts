/**
 * The lookup caches hear every change from the store itself: a change made without going through a
 * management route (a job, the CLI's code path, a transaction) is seen by the very next request.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLookups } from '../../src/gateway/lookups.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call, client, expectError, type Client } from './http.js';

let gateway: TestGateway;
let fake: FakeUpstream;
let admin: Client;
let store: Store;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'invalidation' });
  gateway = await startGateway();
  admin = client(gateway.url, gateway.adminKey);
  store = gateway.server.deps.store;
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

const chat = (key: string, headers: Record<string, string> = {}) =>
  call(
    gateway.url,
    key,
    'POST',
    '/chat/completions',
    { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] },
    headers,
  );

describe('cache invalidation from the store', () => {
  it('a config changed through the store, not a route, is used by the next call', async () => {
    const config = {
      provider: 'openai',
      api_key: 'sk-before',
      custom_host: fake.url,
      retry: { attempts: 1 },
    };
    const created = await admin.post('/configs', { slug: 'direct', config });
    expect(created.status, created.text).toBe(200);
    expect((await chat(gateway.adminKey, { 'x-gateway-config': 'direct' })).status).toBe(200);
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-before');

    await store.updateConfig(created.body.workspace_id, 'direct', {
      config: { ...config, api_key: 'sk-after' },
    });
    expect((await chat(gateway.adminKey, { 'x-gateway-config': 'direct' })).status).toBe(200);
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-after');

    // Changed in a transaction: seen once it commits.
    await store.transaction(async (tx) => {
      await tx.updateConfig(created.body.workspace_id, 'direct', {
        config: { ...config, api_key: 'sk-in-tx' },
      });
    });
    expect((await chat(gateway.adminKey, { 'x-gateway-config': 'direct' })).status).toBe(200);
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-in-tx');
  });

  it('a key revoked through the store stops working on the next request', async () => {
    const created = await admin.post('/api-keys', { name: 'short-lived', role: 'member' });
    expect(created.status, created.text).toBe(200);
    const value = created.body.key as string;
    expect((await call(gateway.url, value, 'GET', '/models')).status).toBe(200);
    await store.updateApiKey(created.body.workspace_id, created.body.id, { status: 'revoked' });
    expectError(await call(gateway.url, value, 'GET', '/models'), 401, 'invalid_api_key');
  });

  it('a virtual key deleted through the store is gone for the next call', async () => {
    const created = await admin.post('/virtual-keys', {
      slug: 'direct-vk',
      provider: 'openai',
      api_key: 'sk-vk',
      custom_host: fake.url,
    });
    expect(created.status, created.text).toBe(200);
    expect((await chat(gateway.adminKey, { 'x-gateway-virtual-key': 'direct-vk' })).status).toBe(200);
    expect(await store.deleteCredential(created.body.workspace_id, 'virtual_key', 'direct-vk')).toBe(true);
    expect((await chat(gateway.adminKey, { 'x-gateway-virtual-key': 'direct-vk' })).status).toBe(404);
  });
});

describe('lookups', () => {
  /**
   * A store with config `c` ({ v: 1 }) in workspace `w`, and a view of it whose config reads answer late,
   * once `release` is called: the read is done, its answer still on its way. Closed after `test`.
   */
  async function withHeldConfigReads(
    test: (held: { own: Store; workspaceId: string; slow: Store; release: () => void }) => Promise<void>,
  ): Promise<void> {
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-lookups-'));
    const own = await openStore({ dataDir, masterKey: randomBytes(32) });
    try {
      const org = await own.createOrganisation({ name: 'o' });
      const ws = await own.createWorkspace({ organisation_id: org.id, name: 'w', slug: 'w' });
      await own.createConfig({
        organisation_id: org.id,
        workspace_id: ws.id,
        slug: 'c',
        name: 'c',
        config: { v: 1 },
      });
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const slow: Store = {
        ...own,
        async getConfig(workspaceId, slugOrId) {
          const config = await own.getConfig(workspaceId, slugOrId);
          await held;
          return config;
        },
      };
      await test({ own, workspaceId: ws.id, slow, release });
    } finally {
      await own.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }

  it('do not cache an answer read before a change that overtook it', () =>
    withHeldConfigReads(async ({ own, workspaceId, slow, release }) => {
      const lookups = createLookups(slow, 60_000);
      own.onChange((change) => lookups.applyChange(change));

      const inFlight = lookups.config(workspaceId, 'c');
      await new Promise((resolve) => setTimeout(resolve, 20));
      await own.updateConfig(workspaceId, 'c', { config: { v: 2 } });
      release();
      expect((await inFlight)?.config).toEqual({ v: 1 });
      expect((await lookups.config(workspaceId, 'c'))?.config).toEqual({ v: 2 });
    }));

  it('keep what a change no one announced made stale at most the cache lifetime after it committed, however long the read that cached it took', () =>
    // Another node's lookups, which never hear the change (its node stopped before announcing it), and a
    // read of theirs done before the change whose answer arrives after it.
    withHeldConfigReads(async ({ own, workspaceId, slow, release }) => {
      const ttlMs = 1_000;
      const lookups = createLookups(slow, ttlMs);
      const inFlight = lookups.config(workspaceId, 'c');
      await new Promise((resolve) => setTimeout(resolve, 20));
      await own.updateConfig(workspaceId, 'c', { config: { v: 2 } });
      const committed = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 800));
      release();
      expect((await inFlight)?.config).toEqual({ v: 1 });
      await new Promise((resolve) => setTimeout(resolve, ttlMs + 100 - (performance.now() - committed)));
      expect((await lookups.config(workspaceId, 'c'))?.config).toEqual({ v: 2 });
    }));
});
