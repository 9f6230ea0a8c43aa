/**
 * How often an API key costs a store read: a client flooding the gateway with bad keys, the same one at
 * once or many different ones, must neither reach the store for each request nor push the good keys out
 * of the cache.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLookups } from '../../src/gateway/lookups.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';

let dataDir: string;
let store: Store;
let value: string;
let reads: number;
let org: { id: string };
let ws: { id: string };

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gateway-key-lookups-'));
  store = await openStore({ dataDir, masterKey: randomBytes(32) });
  org = await store.createOrganisation({ name: 'o' });
  ws = await store.createWorkspace({ organisation_id: org.id, name: 'w', slug: 'w' });
  ({ value } = await store.createApiKey({
    organisation_id: org.id,
    workspace_id: ws.id,
    name: 'k',
    role: 'member',
  }));
  reads = 0;
  const find = store.findApiKeyByValue.bind(store);
  store.findApiKeyByValue = (key) => {
    reads++;
    return find(key);
  };
});

afterEach(async () => {
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('API key lookups', () => {
  it('requests arriving together with one unknown key read the store once', async () => {
    const lookups = createLookups(store, 60_000);
    const bad = `gw-${randomBytes(32).toString('base64url')}`;
    const found = await Promise.all(Array.from({ length: 40 }, () => lookups.apiKey(bad)));
    expect(found.every((key) => key === undefined)).toBe(true);
    expect(reads).toBe(1);
    expect(lookups.cachedApiKey(bad)).toBeNull();
  });

  it('a load that a change overtook is not shared with the requests that come after the change', async () => {
    const lookups = createLookups(store, 60_000);
    store.onChange((change) => lookups.applyChange(change));
    const before = lookups.apiKey(value);
    const key = await store.findApiKeyByValue(value);
    await store.updateApiKey(key!.workspace_id, key!.id, { status: 'revoked' });
    const after = lookups.apiKey(value);
    expect((await before)?.status).toBe('active');
    expect((await after)?.status).toBe('revoked');
  });

  it('many different unknown keys do not push a good key out of the cache', async () => {
    const lookups = createLookups(store, 60_000);
    expect((await lookups.apiKey(value))?.name).toBe('k');
    for (let i = 0; i < 10_050; i++) await lookups.apiKey(`gw-unknown-${i}-0000000000`);
    expect(lookups.cachedApiKey(value)?.name).toBe('k');
  });

  it("another node's new key leaves the keys this node holds cached, and forgets the value it held as unknown", async () => {
    // Node B hears what node A's store announces as it would over Redis.
    const b = createLookups(store, 60_000);
    const a = createLookups(store, 60_000, (event) => b.applyRemote(event));
    store.onChange((change) => a.applyChange(change));
    expect((await b.apiKey(value))?.name).toBe('k');
    const later = `gw-${randomBytes(32).toString('base64url')}`;
    expect(await b.apiKey(later)).toBeUndefined();

    await store.createApiKey({
      organisation_id: org.id,
      workspace_id: ws.id,
      name: 'new',
      role: 'member',
      value: later,
    });
    expect(b.cachedApiKey(value)?.name).toBe('k');
    expect(b.cachedApiKey(later)).toBeUndefined();
    expect((await b.apiKey(later))?.name).toBe('new');
  });

  it('a key read while announcements that leave it alone arrive is cached; an unknown value read while a key is created is not', async () => {
    const lookups = createLookups(store, 60_000);
    // A store whose key reads answer late: the read is done, its answer still on its way.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const find = store.findApiKeyByValue.bind(store);
    store.findApiKeyByValue = async (key) => {
      const found = await find(key);
      await held;
      return found;
    };
    const unknown = `gw-${randomBytes(32).toString('base64url')}`;
    const inFlight = [lookups.apiKey(value), lookups.apiKey(unknown)];
    lookups.applyRemote({ kind: 'workspace', workspaceId: ws.id });
    lookups.applyRemote({ kind: 'api-keys', unknownOnly: true });
    release();
    const [key, none] = await Promise.all(inFlight);
    expect(key?.name).toBe('k');
    expect(none).toBeUndefined();
    expect(lookups.cachedApiKey(value)?.name).toBe('k');
    expect(lookups.cachedApiKey(unknown)).toBeUndefined();
  });
});
