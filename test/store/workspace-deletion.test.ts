/**
 * Deleting a workspace (store.deleteWorkspace) on SQLite and PostgreSQL: in one transaction its keys and
 * policies go, its credentials and configs are deleted, its files expire, it leaves the organisation's
 * list and its slug is free; nothing of the organisation's other workspace is touched, and the change is
 * announced once committed.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import type { Store, StoreChange } from '../../src/store/types.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';

function contract(open: () => Promise<{ store: Store; close(): Promise<void> }>) {
  let opened: { store: Store; close(): Promise<void> };
  beforeAll(async () => {
    opened = await open();
  });
  afterAll(async () => opened?.close());

  async function seeded(store: Store, organisation_id: string, slug: string) {
    const ws = await store.createWorkspace({ organisation_id, name: slug, slug });
    const workspace_id = ws.id;
    const key = await store.createApiKey({ organisation_id, workspace_id, name: 'k', role: 'admin' });
    await store.createCredential({
      organisation_id,
      workspace_id,
      kind: 'virtual_key',
      slug: 'vk',
      name: 'vk',
      provider: 'openai',
      secret: { api_key: 'sk-x' },
    });
    await store.createConfig({
      organisation_id,
      workspace_id,
      slug: 'cfg',
      name: 'cfg',
      config: { provider: 'openai' },
    });
    await store.createRateLimitPolicy({
      organisation_id,
      workspace_id,
      name: 'p',
      type: 'requests',
      unit: 'rpm',
      value: 10,
      conditions: [{ key: 'workspace_id', value: workspace_id }],
      group_by: [{ key: 'api_key' }],
    } as never);
    const file = await store.files.create({
      id: `file_${randomBytes(6).toString('hex')}`,
      workspace_id,
      purpose: 'batch',
      filename: 'in.jsonl',
      bytes: 1,
      line_count: 1,
      created_at: Math.floor(Date.now() / 1000),
    });
    const batch = await store.batches.create({
      workspace_id,
      endpoint: '/v1/chat/completions',
      input_file_id: file.id,
      completion_window: 'immediate',
      metadata: null,
      concurrency: null,
      expires_at: Math.floor(Date.now() / 1000) + 3600,
      call: {
        caller: { id: key.key.id, organisation_id, workspace_id },
        headers: {},
        metadata: {},
        trace_id: 't',
      },
    });
    await store.batches.update(batch.id, { status: 'in_progress', total: 1 });
    const responseId = `resp_${randomBytes(8).toString('hex')}`;
    await store.createResponse({
      workspace_id,
      id: responseId,
      previous_response_id: null,
      status: 'completed',
      body: { id: responseId, object: 'response' },
      input_items: [],
    });
    const cached = `sc_${randomBytes(6).toString('hex')}`;
    await store.insertSemanticCacheEntry({
      id: cached,
      workspace_id,
      namespace: '',
      partition_key: 'p',
      exact_key: 'x',
      vector: new Float32Array([1, 0]),
      answer: '{"kind":"json","body":{},"storedAt":1}',
      created_at_ms: Date.now(),
      expires_at_ms: Date.now() + 50 * 365 * 86_400_000,
    });
    return { ws, key, file, batch, responseId, cached };
  }

  it('makes the workspace and all it holds unusable, and leaves the other workspace as it was', async () => {
    const { store } = opened;
    const org = await store.createOrganisation({ name: 'o' });
    const home = await seeded(store, org.id, 'default');
    const gone = await seeded(store, org.id, 'research');
    const changes: StoreChange[] = [];
    const stop = store.onChange((change) => changes.push(change));

    expect(await store.transaction((tx) => tx.deleteWorkspace(org.id, gone.ws.id))).toBe(true);
    stop();
    expect(changes).toContainEqual({
      resource: 'workspace',
      action: 'deleted',
      workspace_id: gone.ws.id,
      id: gone.ws.id,
    });

    expect((await store.listWorkspaces(org.id)).map((w) => w.slug)).toEqual(['default']);
    expect(await store.getWorkspace(gone.ws.id)).toBeUndefined();
    expect(await store.findApiKeyByValue(gone.key.value)).toBeUndefined();
    expect(await store.getCredential(gone.ws.id, 'virtual_key', 'vk')).toBeUndefined();
    expect(await store.getConfig(gone.ws.id, 'cfg')).toBeUndefined();
    expect((await store.listRateLimitPolicies({ workspace_id: gone.ws.id })).data).toEqual([]);
    const now = Math.floor(Date.now() / 1000);
    expect((await store.files.expired(now, 1000)).map((f) => f.id)).toContain(gone.file.id);
    // Its batch under way stops as a cancelled one does, and the results it still writes expire at once.
    expect(await store.batches.getById(gone.batch.id)).toMatchObject({
      status: 'cancelling',
      output_expires_after: 0,
    });
    expect(await store.getResponse(gone.ws.id, gone.responseId)).toBeUndefined();
    // Its semantic cache entries expire: never read again, swept by the cache's sweep.
    const cachedAfter = await store.getSemanticCacheEntry(gone.ws.id, gone.cached);
    expect(cachedAfter?.expires_at_ms).toBeLessThanOrEqual(Date.now());
    expect(await store.listSemanticCacheIds(gone.ws.id, 'p', Date.now())).toEqual([]);
    // No key can be made in it any more.
    await expect(
      store.createApiKey({ organisation_id: org.id, workspace_id: gone.ws.id, name: 'late', role: 'admin' }),
    ).rejects.toMatchObject({ code: 'not_found' });

    // The home workspace is untouched.
    expect(await store.findApiKeyByValue(home.key.value)).toMatchObject({
      id: home.key.key.id,
      status: 'active',
    });
    expect(await store.getCredential(home.ws.id, 'virtual_key', 'vk')).toBeDefined();
    expect(await store.getConfig(home.ws.id, 'cfg')).toBeDefined();
    expect((await store.listRateLimitPolicies({ workspace_id: home.ws.id })).data).toHaveLength(1);
    expect((await store.files.expired(now, 1000)).map((f) => f.id)).not.toContain(home.file.id);
    expect(await store.files.get(home.ws.id, home.file.id)).toBeDefined();
    expect(await store.getResponse(home.ws.id, home.responseId)).toBeDefined();
    expect(await store.listSemanticCacheIds(home.ws.id, 'p', Date.now())).toEqual([home.cached]);
    expect(await store.batches.getById(home.batch.id)).toMatchObject({
      status: 'in_progress',
      output_expires_after: null,
    });

    // Its slug is free again, for a new workspace that holds nothing of the old one.
    const again = await store.createWorkspace({ organisation_id: org.id, name: 'again', slug: 'research' });
    expect(again.id).not.toBe(gone.ws.id);
    expect(await store.getConfig(again.id, 'cfg')).toBeUndefined();
    // Deleting it again finds nothing.
    expect(await store.deleteWorkspace(org.id, gone.ws.id)).toBe(false);
  });

  it('deletes nothing of another organisation', async () => {
    const { store } = opened;
    const mine = await store.createOrganisation({ name: 'mine' });
    const theirs = await store.createOrganisation({ name: 'theirs' });
    const other = await seeded(store, theirs.id, 'research');
    expect(await store.deleteWorkspace(mine.id, other.ws.id)).toBe(false);
    expect(await store.findApiKeyByValue(other.key.value)).toBeDefined();
    expect((await store.listWorkspaces(theirs.id)).map((w) => w.id)).toEqual([other.ws.id]);
  });
}

describe('workspace deletion on SQLite', () => {
  contract(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-ws-delete-'));
    const store = await openStore({ dataDir, masterKey: randomBytes(32) });
    return {
      store,
      async close() {
        await store.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  });
});

describeWithPostgres('workspace deletion on PostgreSQL', () => {
  contract(async () => {
    const schema = freshSchemaName('ws_delete');
    const store = await openStore({
      databaseUrl: postgresUrl(),
      dataDir: '/nonexistent',
      masterKey: randomBytes(32),
      pgSchema: schema,
    });
    return {
      store,
      async close() {
        await store.close();
        await dropSchema(schema);
      },
    };
  });
});
