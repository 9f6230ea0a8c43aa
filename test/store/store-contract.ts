/**
 * One suite for every Store implementation: store.test.ts runs it against SQLite and PostgreSQL.
 * Each test makes its own organisation and workspaces, so tests share one database without
 * seeing each other's rows.
 */
import { migrationProvider } from '../../src/store/migrations/index.js';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import { newId } from '../../src/store/ids.js';
import type { LogRecord, SemanticCacheEntry, Store, StoreChange, Workspace } from '../../src/store/types.js';

export interface StoreHarness {
  /** Opens (and migrates) the store at the harness's location with the given master key. */
  open(masterKey: Buffer): Promise<Store>;
  /** Runs SQL directly on the database, bypassing the store; `?` placeholders. */
  raw(sqlText: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  cleanup(): Promise<void>;
}

export interface Tenant {
  orgId: string;
  /** Its `main` workspace. */
  ws: Workspace;
  /** A second workspace of the same organisation. */
  other: Workspace;
}

/** A new organisation with two workspaces: each test makes its own, so tests share one database. */
export async function newTenant(store: Store, name: string): Promise<Tenant> {
  const org = await store.createOrganisation({ name });
  const ws = await store.createWorkspace({ organisation_id: org.id, name: 'Main', slug: 'main' });
  const other = await store.createWorkspace({ organisation_id: org.id, name: 'Other', slug: 'other' });
  return { orgId: org.id, ws, other };
}

export function storeContract(makeHarness: () => Promise<StoreHarness>): void {
  const masterKey = randomBytes(32);
  let harness: StoreHarness;
  let store: Store;

  beforeAll(async () => {
    harness = await makeHarness();
    store = await harness.open(masterKey);
  });
  afterAll(async () => {
    await store?.close();
    await harness?.cleanup();
  });

  const tenant = () => newTenant(store, 'Acme');

  async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe(code);
  }

  describe('migrations', () => {
    it('opening the same database again runs no migration twice and keeps the data', async () => {
      const org = await store.createOrganisation({ name: 'Persisted' });
      const again = await harness.open(masterKey);
      try {
        await again.migrate();
        expect(await again.getOrganisation(org.id)).toEqual(org);
      } finally {
        await again.close();
      }
      const applied = await harness.raw('select name from store_migrations order by name');
      expect(applied.map((row) => row.name)).toEqual(
        Object.keys(await migrationProvider.getMigrations()).sort(),
      );
    });

    // 0030 for the catalog provider a node's override_params.model names, 0031 for the one a prompt
    // version's parameters.model names, as 0027 for the names asked through; run again from any, the
    // migrations after it undone first, as their `down` does.
    it.each([
      {
        from: '0027',
        undo: [
          'drop table guardrail_version_references',
          'alter table guardrail_versions drop column references_indexed',
        ],
      },
      { from: '0030', undo: [] },
      { from: '0031', undo: [] },
    ])(
      '$from marks the config and prompt versions recorded before it unrecorded, to be read again',
      async ({ from, undo }) => {
        const { orgId, ws } = await tenant();
        const owner = { organisation_id: orgId, workspace_id: ws.id };
        // Recorded as 0026 read it: the key its semantic cache embeds through was not counted.
        const config = await store.createConfig({
          ...owner,
          slug: 'recorded-before',
          name: 'recorded-before',
          config: {
            provider: 'openai',
            cache: { mode: 'semantic', embedding: { virtual_key: 'embedder', model: 'e' } },
          },
          references: [],
        });
        const prompt = await store.createPrompt({
          ...owner,
          slug: 'recorded-before',
          name: 'recorded-before',
          prompt: { template_type: 'chat', string: '[]', parameters: {}, config: 'recorded-before' },
          references: ['config:recorded-before'],
        });
        expect(await store.listConfigVersionsWithoutReferences(ws.id)).toEqual([]);
        for (const statement of undo) await harness.raw(statement);
        await harness.raw(`delete from store_migrations where name >= '${from}'`);
        const again = await harness.open(masterKey);
        try {
          const configs = await again.listConfigVersionsWithoutReferences(ws.id);
          expect(configs.map((version) => [version.config_id, version.version])).toEqual([[config.id, 1]]);
          const prompts = await again.listPromptVersionsWithoutReferences(ws.id);
          expect(prompts.map((version) => [version.prompt_id, version.version])).toEqual([[prompt.id, 1]]);
          // Recorded again, what was recorded before is still there.
          await again.recordConfigVersionReferences(ws.id, config.id, 1, ['virtual_key:embedder']);
          await again.recordPromptVersionReferences(ws.id, prompt.id, 1, ['config:recorded-before']);
          expect(
            (await again.listConfigsReferencing(ws.id, ['virtual_key:embedder'])).map((c) => c.id),
          ).toEqual([config.id]);
          const found = await again.listPromptVersionsReferencing(ws.id, ['config:recorded-before']);
          expect(found.map((version) => version.prompt_id)).toEqual([prompt.id]);
        } finally {
          await again.close();
        }
      },
    );
  });

  describe('transactions', () => {
    it('commits every change of the callback together', async () => {
      const { orgId, ws } = await tenant();
      const result = await store.transaction(async (tx) => {
        const config = await tx.createConfig({
          organisation_id: orgId,
          workspace_id: ws.id,
          slug: 'tx-config',
          name: 't',
          config: { a: 1 },
        });
        await tx.updateConfig(ws.id, config.id, { config: { a: 2 } });
        const { key } = await tx.createApiKey({
          organisation_id: orgId,
          workspace_id: ws.id,
          name: 'k',
          role: 'member',
        });
        // A transaction reads its own writes.
        expect((await tx.getConfig(ws.id, 'tx-config'))?.version).toBe(2);
        return { configId: config.id, keyId: key.id };
      });
      expect((await store.getConfig(ws.id, result.configId))?.config).toEqual({ a: 2 });
      expect((await store.listConfigVersions(ws.id, result.configId)).map((v) => v.version)).toEqual([1, 2]);
      expect(await store.getApiKey(ws.id, result.keyId)).toBeDefined();
    });

    it('rolls every change back when the callback throws, and passes the error on', async () => {
      const { orgId, ws } = await tenant();
      const kept = await store.createConfig({
        organisation_id: orgId,
        workspace_id: ws.id,
        slug: 'kept',
        name: 'k',
        config: { v: 1 },
      });
      const failure = new Error('changed my mind');
      await expect(
        store.transaction(async (tx) => {
          await tx.updateConfig(ws.id, kept.id, { config: { v: 2 }, name: 'changed' });
          await tx.createConfig({
            organisation_id: orgId,
            workspace_id: ws.id,
            slug: 'dropped',
            name: 'd',
            config: {},
          });
          await tx.createCredential({
            organisation_id: orgId,
            workspace_id: ws.id,
            kind: 'virtual_key',
            slug: 'dropped-vk',
            name: 'd',
            provider: 'openai',
            secret: { api_key: 'x' },
          });
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await store.getConfig(ws.id, kept.id)).toEqual(kept);
      expect((await store.listConfigVersions(ws.id, kept.id)).map((v) => v.version)).toEqual([1]);
      expect(await store.getConfig(ws.id, 'dropped')).toBeUndefined();
      expect(await store.getCredential(ws.id, 'virtual_key', 'dropped-vk')).toBeUndefined();
    });

    it('rolls back on a conflict inside the transaction', async () => {
      const { orgId, ws } = await tenant();
      await store.createConfig({
        organisation_id: orgId,
        workspace_id: ws.id,
        slug: 'taken',
        name: 't',
        config: {},
      });
      await expectCode(
        store.transaction(async (tx) => {
          await tx.createConfig({
            organisation_id: orgId,
            workspace_id: ws.id,
            slug: 'first',
            name: 'f',
            config: {},
          });
          await tx.createConfig({
            organisation_id: orgId,
            workspace_id: ws.id,
            slug: 'taken',
            name: 't',
            config: {},
          });
        }),
        'conflict',
      );
      expect(await store.getConfig(ws.id, 'first')).toBeUndefined();
    });

    it('an API key value given again inside a transaction returns the key and leaves the transaction usable', async () => {
      const { orgId, ws } = await tenant();
      const value = `tx-admin-${randomBytes(12).toString('hex')}`;
      const first = await store.createApiKey({
        organisation_id: orgId,
        workspace_id: ws.id,
        name: 'a',
        role: 'admin',
        value,
      });
      const config = await store.transaction(async (tx) => {
        const again = await tx.createApiKey({
          organisation_id: orgId,
          workspace_id: ws.id,
          name: 'b',
          role: 'admin',
          value,
        });
        expect(again.key).toEqual(first.key);
        return tx.createConfig({
          organisation_id: orgId,
          workspace_id: ws.id,
          slug: 'after-key',
          name: 'a',
          config: {},
        });
      });
      expect(await store.getConfig(ws.id, 'after-key')).toEqual(config);
    });
  });

  describe('change announcements', () => {
    it('announces each committed change of workspaces, keys, credentials and configs, and nothing else', async () => {
      const heard: StoreChange[] = [];
      const stop = store.onChange((change) => heard.push(change));
      try {
        const { orgId, ws } = await tenant();
        const key = await store.createApiKey({
          organisation_id: orgId,
          workspace_id: ws.id,
          name: 'k',
          role: 'member',
        });
        await store.updateApiKey(ws.id, key.key.id, { status: 'revoked' });
        await store.touchApiKey(key.key.id, 2_000_000_000);
        await store.deleteApiKey(ws.id, key.key.id);
        const credential = await store.createCredential({
          organisation_id: orgId,
          workspace_id: ws.id,
          kind: 'provider',
          slug: 'p',
          name: 'p',
          provider: 'openai',
          secret: { api_key: 'x' },
        });
        await store.updateCredential(ws.id, 'provider', 'p', { name: 'renamed' });
        await store.deleteCredential(ws.id, 'provider', 'p');
        const config = await store.createConfig({
          organisation_id: orgId,
          workspace_id: ws.id,
          slug: 'c',
          name: 'c',
          config: {},
        });
        await store.updateConfig(ws.id, 'c', { config: { a: 1 } });
        await store.deleteConfig(ws.id, 'c');
        // Nothing happens, nothing is announced.
        await store.updateApiKey(ws.id, 'key_missing', { name: 'x' });
        await store.deleteApiKey(ws.id, 'key_missing');
        await store.updateCredential(ws.id, 'provider', 'p', { name: 'gone' });
        await store.deleteCredential(ws.id, 'provider', 'p');
        await store.updateConfig(ws.id, 'c', { name: 'gone' });
        await store.deleteConfig(ws.id, 'c');
        await store.insertLogs([logRecord(ws.id)]);
        await store.jobs.enqueue({ kind: 'silent', payload: {} });

        const mine = heard.filter((change) => change.workspace_id === ws.id);
        expect(mine.map(({ resource, action, id }) => [resource, action, id])).toEqual([
          ['workspace', 'created', ws.id],
          ['api_key', 'created', key.key.id],
          ['api_key', 'updated', key.key.id],
          ['api_key', 'deleted', key.key.id],
          ['credential', 'created', credential.id],
          ['credential', 'updated', credential.id],
          ['credential', 'deleted', credential.id],
          ['config', 'created', config.id],
          ['config', 'updated', config.id],
          ['config', 'deleted', config.id],
        ]);
      } finally {
        stop();
      }
      const before = heard.length;
      await tenant();
      expect(heard).toHaveLength(before);
    });

    it('announces the changes of a transaction when it commits, and none when it rolls back', async () => {
      const { orgId, ws } = await tenant();
      const heard: StoreChange[] = [];
      const stop = store.onChange((change) => heard.push(change));
      try {
        let heardInside = -1;
        await store.transaction(async (tx) => {
          await tx.createConfig({
            organisation_id: orgId,
            workspace_id: ws.id,
            slug: 'txc',
            name: 't',
            config: {},
          });
          await tx.updateConfig(ws.id, 'txc', { config: { b: 2 } });
          heardInside = heard.length;
        });
        expect(heardInside).toBe(0);
        expect(heard.map((change) => `${change.resource} ${change.action}`)).toEqual([
          'config created',
          'config updated',
        ]);

        heard.length = 0;
        await expect(
          store.transaction(async (tx) => {
            await tx.updateConfig(ws.id, 'txc', { config: { c: 3 } });
            throw new Error('no');
          }),
        ).rejects.toThrow('no');
        expect(heard).toEqual([]);
      } finally {
        stop();
      }
    });

    it('a listener that throws does not fail the change it hears about', async () => {
      const { orgId, ws } = await tenant();
      const warnings: Error[] = [];
      const onWarning = (warning: Error) => warnings.push(warning);
      process.on('warning', onWarning);
      const stop = store.onChange(() => {
        throw new Error('listener broke');
      });
      try {
        const created = await store.createConfig({
          organisation_id: orgId,
          workspace_id: ws.id,
          slug: 'w',
          name: 'w',
          config: {},
        });
        expect(await store.getConfig(ws.id, created.id)).toEqual(created);
        await new Promise((resolve) => setImmediate(resolve));
        expect(warnings.map((warning) => warning.message)).toContain('listener broke');
      } finally {
        stop();
        process.off('warning', onWarning);
      }
    });
  });

  describe('organisations and workspaces', () => {
    it('creates, reads and lists per organisation', async () => {
      const { orgId, ws, other } = await tenant();
      expect(orgId).toMatch(/^[0-9a-f-]{36}$/);
      expect(ws.id).toMatch(/^ws_[0-9A-Z]{26}$/);
      expect(await store.getOrganisation(orgId)).toMatchObject({ id: orgId, name: 'Acme' });
      expect(await store.getWorkspace(ws.id)).toEqual(ws);
      expect(typeof ws.created_at).toBe('number');
      expect((await store.listWorkspaces(orgId)).map((w) => w.id).sort()).toEqual([ws.id, other.id].sort());
      const second = await tenant();
      expect((await store.listWorkspaces(second.orgId)).map((w) => w.id)).not.toContain(ws.id);
      expect(await store.getOrganisation('nope')).toBeUndefined();
      expect(await store.getWorkspace('ws_nope')).toBeUndefined();
    });

    it('refuses a second workspace with the same slug in one organisation', async () => {
      const { orgId } = await tenant();
      await expectCode(
        store.createWorkspace({ organisation_id: orgId, name: 'Again', slug: 'main' }),
        'conflict',
      );
    });
  });

  describe('API keys', () => {
    it('stores only a hash and finds the key by its value', async () => {
      const { orgId, ws } = await tenant();
      const { key, value } = await store.createApiKey({
        organisation_id: orgId,
        workspace_id: ws.id,
        name: 'ci',
        role: 'member',
        metadata: { team: 'search' },
      });
      expect(value).toMatch(/^gw-[A-Za-z0-9_-]{43}$/);
      expect(key).toMatchObject({
        workspace_id: ws.id,
        organisation_id: orgId,
        name: 'ci',
        role: 'member',
        status: 'active',
        key_prefix: value.slice(3, 11),
        expires_at: null,
        last_used_at: null,
        metadata: { team: 'search' },
      });
      expect(key.id).toMatch(/^key_/);
      expect(await store.findApiKeyByValue(value)).toEqual(key);
      expect(await store.findApiKeyByValue(value + 'x')).toBeUndefined();
      expect(await store.findApiKeyByValue(`gw-${randomBytes(32).toString('base64url')}`)).toBeUndefined();

      const [row] = await harness.raw('select * from api_keys where id = ?', [key.id]);
      expect(JSON.stringify(row)).not.toContain(value);
      expect(JSON.stringify(row)).not.toContain(value.slice(3));
      expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
    });

    it('the same value hashes differently under another master key', async () => {
      const { orgId, ws } = await tenant();
      const { value } = await store.createApiKey({
        organisation_id: orgId,
        workspace_id: ws.id,
        name: 'k',
        role: 'admin',
      });
      const foreign = await harness.open(randomBytes(32));
      try {
        expect(await foreign.findApiKeyByValue(value)).toBeUndefined();
      } finally {
        await foreign.close();
      }
    });

    it('reads, lists, updates, revokes, touches and deletes within the workspace only', async () => {
      const { orgId, ws, other } = await tenant();
      const a = await store.createApiKey({
        organisation_id: orgId,
        workspace_id: ws.id,
        name: 'a',
        role: 'admin',
      });
      const b = await store.createApiKey({
        organisation_id: orgId,
        workspace_id: ws.id,
        name: 'b',
        role: 'member',
      });
      const c = await store.createApiKey({
        organisation_id: orgId,
        workspace_id: other.id,
        name: 'c',
        role: 'member',
      });

      expect(await store.getApiKey(ws.id, a.key.id)).toEqual(a.key);
      expect(await store.getApiKey(other.id, a.key.id)).toBeUndefined();
      expect((await store.listApiKeys(ws.id)).map((k) => k.id).sort()).toEqual([a.key.id, b.key.id].sort());
      expect((await store.listApiKeys(other.id)).map((k) => k.id)).toEqual([c.key.id]);

      expect(await store.updateApiKey(other.id, a.key.id, { name: 'stolen' })).toBeUndefined();
      const renamed = await store.updateApiKey(ws.id, a.key.id, {
        name: 'renamed',
        role: 'member',
        expires_at: 4_000_000_000,
        metadata: { env: 'prod' },
      });
      expect(renamed).toMatchObject({
        name: 'renamed',
        role: 'member',
        expires_at: 4_000_000_000,
        metadata: { env: 'prod' },
      });

      await store.updateApiKey(ws.id, a.key.id, { status: 'revoked' });
      expect(await store.findApiKeyByValue(a.value)).toMatchObject({ id: a.key.id, status: 'revoked' });

      await store.touchApiKey(b.key.id, 2_000_000_000);
      await store.touchApiKey(b.key.id, 1_900_000_000);
      expect((await store.getApiKey(ws.id, b.key.id))?.last_used_at).toBe(2_000_000_000);

      // Rotation: a new value for the same active key, within its workspace only; a revoked key is not.
      expect(await store.rotateApiKey(other.id, b.key.id)).toBeUndefined();
      expect(await store.rotateApiKey(ws.id, a.key.id)).toBeUndefined();
      const rotated = await store.rotateApiKey(ws.id, b.key.id);
      expect(rotated?.key).toMatchObject({ id: b.key.id, status: 'active', last_used_at: 2_000_000_000 });
      expect(await store.findApiKeyByValue(b.value)).toBeUndefined();
      expect((await store.findApiKeyByValue(rotated!.value))?.id).toBe(b.key.id);
      b.value = rotated!.value;

      const before = await store.countApiKeys();
      expect(await store.deleteApiKey(other.id, b.key.id)).toBe(false);
      expect(await store.deleteApiKey(ws.id, b.key.id)).toBe(true);
      expect(await store.deleteApiKey(ws.id, b.key.id)).toBe(false);
      expect(await store.findApiKeyByValue(b.value)).toBeUndefined();
      expect(await store.countApiKeys()).toBe(before - 1);
      expect(typeof before).toBe('number');
    });

    it('stores a given value once and returns the existing key when given again', async () => {
      const { orgId, ws } = await tenant();
      const value = `admin-${randomBytes(12).toString('hex')}`;
      const first = await store.createApiKey({
        organisation_id: orgId,
        workspace_id: ws.id,
        name: 'admin',
        role: 'admin',
        value,
      });
      expect(first.value).toBe(value);
      // A quarter of the value at most: 7 of these 30 characters.
      expect(first.key.key_prefix).toBe(value.slice(0, 7));
      const second = await store.createApiKey({
        organisation_id: orgId,
        workspace_id: ws.id,
        name: 'again',
        role: 'admin',
        value,
      });
      expect(second.key).toEqual(first.key);
      expect(await store.findApiKeyByValue(value)).toEqual(first.key);
      await expectCode(
        store.createApiKey({
          organisation_id: orgId,
          workspace_id: ws.id,
          name: 'weak',
          role: 'admin',
          value: 'short',
        }),
        'invalid_body',
      );
    });

    it('refuses a workspace of another organisation', async () => {
      const one = await tenant();
      const two = await tenant();
      await expectCode(
        store.createApiKey({ organisation_id: one.orgId, workspace_id: two.ws.id, name: 'x', role: 'admin' }),
        'not_found',
      );
    });
  });

  describe('provider credentials', () => {
    const secret = {
      api_key: 'sk-very-secret-provider-key-123',
      cloudb_region: 'europe-west4',
      deployments: [{ alias: 'a' }],
    };

    it('encrypts the secret at rest and reads it back by slug or id', async () => {
      const { orgId, ws } = await tenant();
      const created = await store.createCredential({
        organisation_id: orgId,
        workspace_id: ws.id,
        kind: 'virtual_key',
        slug: 'openai-prod',
        name: 'OpenAI prod',
        provider: 'openai',
        secret,
      });
      expect(created).toMatchObject({ kind: 'virtual_key', slug: 'openai-prod', status: 'active', secret });
      expect(created.id).toMatch(/^vk_/);
      expect(await store.getCredential(ws.id, 'virtual_key', 'openai-prod')).toEqual(created);
      expect(await store.getCredential(ws.id, 'virtual_key', created.id)).toEqual(created);
      expect(await store.getCredential(ws.id, 'provider', 'openai-prod')).toBeUndefined();

      const [row] = await harness.raw('select * from credentials where id = ?', [created.id]);
      const rawText = JSON.stringify(row);
      expect(rawText).not.toContain('sk-very-secret');
      expect(rawText).not.toContain('europe-west4');
      expect(String(row.secret_encrypted)).toMatch(/^v1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]+$/);
    });

    it('cannot decrypt under another master key, nor a blob moved to another row', async () => {
      const { orgId, ws } = await tenant();
      const one = await store.createCredential({
        organisation_id: orgId,
        workspace_id: ws.id,
        kind: 'provider',
        slug: 'one',
        name: '1',
        provider: 'openai',
        secret,
      });
      const two = await store.createCredential({
        organisation_id: orgId,
        workspace_id: ws.id,
        kind: 'provider',
        slug: 'two',
        name: '2',
        provider: 'openai',
        secret: { api_key: 'other' },
      });
      expect(two.id).toMatch(/^prv_/);

      const foreign = await harness.open(randomBytes(32));
      try {
        await expectCode(foreign.getCredential(ws.id, 'provider', 'one'), 'internal_error');
      } finally {
        await foreign.close();
      }

      const [row] = await harness.raw('select secret_encrypted from credentials where id = ?', [one.id]);
      await harness.raw('update credentials set secret_encrypted = ? where id = ?', [
        row.secret_encrypted,
        two.id,
      ]);
      await expectCode(store.getCredential(ws.id, 'provider', two.id), 'internal_error');
    });

    it('keeps slugs unique per workspace and kind among live rows', async () => {
      const { orgId, ws, other } = await tenant();
      const input = {
        organisation_id: orgId,
        workspace_id: ws.id,
        kind: 'virtual_key' as const,
        slug: 'dup',
        name: 'd',
        provider: 'openai',
        secret,
      };
      const first = await store.createCredential(input);
      await expectCode(store.createCredential(input), 'conflict');
      await store.createCredential({ ...input, kind: 'provider' });
      await store.createCredential({ ...input, workspace_id: other.id });

      expect(await store.deleteCredential(other.id, 'virtual_key', first.id)).toBe(false);
      expect(await store.deleteCredential(ws.id, 'virtual_key', 'dup')).toBe(true);
      expect(await store.deleteCredential(ws.id, 'virtual_key', 'dup')).toBe(false);
      expect(await store.getCredential(ws.id, 'virtual_key', first.id)).toBeUndefined();
      const reused = await store.createCredential(input);
      expect(reused.id).not.toBe(first.id);
    });

    it('lists per workspace and kind, and updates secret, name and status', async () => {
      const { orgId, ws, other } = await tenant();
      const base = { organisation_id: orgId, workspace_id: ws.id, name: 'n', provider: 'openai', secret };
      const a = await store.createCredential({ ...base, kind: 'virtual_key', slug: 'a' });
      const b = await store.createCredential({ ...base, kind: 'virtual_key', slug: 'b' });
      await store.createCredential({ ...base, kind: 'provider', slug: 'c' });
      await store.createCredential({ ...base, workspace_id: other.id, kind: 'virtual_key', slug: 'd' });
      expect((await store.listCredentials(ws.id, 'virtual_key')).map((c) => c.slug).sort()).toEqual([
        'a',
        'b',
      ]);
      expect((await store.listCredentials(ws.id, 'provider')).map((c) => c.slug)).toEqual(['c']);

      expect(await store.updateCredential(other.id, 'virtual_key', a.id, { name: 'x' })).toBeUndefined();
      const updated = await store.updateCredential(ws.id, 'virtual_key', 'a', {
        name: 'renamed',
        provider: 'anthropic',
        secret: { api_key: 'sk-rotated-secret' },
        status: 'revoked',
      });
      expect(updated).toMatchObject({
        id: a.id,
        name: 'renamed',
        provider: 'anthropic',
        status: 'revoked',
        secret: { api_key: 'sk-rotated-secret' },
      });
      expect(await store.getCredential(ws.id, 'virtual_key', 'a')).toEqual(updated);
      const [row] = await harness.raw('select secret_encrypted from credentials where id = ?', [a.id]);
      expect(String(row.secret_encrypted)).not.toContain('rotated');
      expect((await store.getCredential(ws.id, 'virtual_key', b.id))?.secret).toEqual(secret);
    });
  });

  describe('stored configs', () => {
    it('versions every config change and keeps the history', async () => {
      const { orgId, ws } = await tenant();
      const created = await store.createConfig({
        organisation_id: orgId,
        workspace_id: ws.id,
        slug: 'pc-prod',
        name: 'Prod',
        config: { strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'a' }] },
      });
      expect(created).toMatchObject({ slug: 'pc-prod', version: 1, status: 'active' });
      expect(created.id).toMatch(/^cfg_/);

      const v2 = await store.updateConfig(ws.id, 'pc-prod', { config: { virtual_key: 'b' } });
      expect(v2).toMatchObject({ id: created.id, version: 2, config: { virtual_key: 'b' } });
      const renamed = await store.updateConfig(ws.id, created.id, { name: 'Production', status: 'archived' });
      expect(renamed).toMatchObject({
        version: 2,
        name: 'Production',
        status: 'archived',
        config: { virtual_key: 'b' },
      });
      const v3 = await store.updateConfig(ws.id, created.id, { config: { virtual_key: 'c' } });
      expect(v3?.version).toBe(3);

      expect(await store.getConfig(ws.id, 'pc-prod')).toEqual(v3);
      expect(await store.getConfig(ws.id, created.id)).toEqual(v3);
      const versions = await store.listConfigVersions(ws.id, 'pc-prod');
      expect(versions.map((v) => [v.version, v.config])).toEqual([
        [1, { strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'a' }] }],
        [2, { virtual_key: 'b' }],
        [3, { virtual_key: 'c' }],
      ]);
      expect(versions.every((v) => v.config_id === created.id && typeof v.created_at === 'number')).toBe(
        true,
      );
    });

    it('gives concurrent updates distinct versions', async () => {
      const { orgId, ws } = await tenant();
      await store.createConfig({
        organisation_id: orgId,
        workspace_id: ws.id,
        slug: 'race',
        name: 'r',
        config: { n: 0 },
      });
      await Promise.all([1, 2, 3, 4].map((n) => store.updateConfig(ws.id, 'race', { config: { n } })));
      const versions = await store.listConfigVersions(ws.id, 'race');
      expect(versions.map((v) => v.version)).toEqual([1, 2, 3, 4, 5]);
      expect((await store.getConfig(ws.id, 'race'))?.version).toBe(5);
    });

    it('updates a config while log batches are being written, 50 times in a row', async () => {
      // On SQLite the log thread writes through its own connection: an update that read the config
      // and then found the file changed under it failed with SQLITE_BUSY_SNAPSHOT (a 500 on PATCH).
      const { orgId, ws } = await tenant();
      await store.createConfig({
        organisation_id: orgId,
        workspace_id: ws.id,
        slug: 'busy',
        name: 'b',
        config: {},
      });
      for (let n = 1; n <= 50; n++) {
        const logs = Array.from({ length: 20 }, () => logRecord(ws.id));
        const [, updated] = await Promise.all([
          store.insertLogs(logs),
          store.updateConfig(ws.id, 'busy', n % 2 === 0 ? { config: { n } } : { name: `name ${n}` }),
        ]);
        expect(updated?.version).toBe(1 + Math.floor(n / 2));
      }
      expect((await store.listConfigVersions(ws.id, 'busy')).map((v) => v.version)).toEqual(
        Array.from({ length: 26 }, (_, i) => i + 1),
      );
    });

    it('gives many concurrent updates distinct versions with no gaps', async () => {
      const { orgId, ws } = await tenant();
      await store.createConfig({
        organisation_id: orgId,
        workspace_id: ws.id,
        slug: 'many',
        name: 'm',
        config: {},
      });
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, n) => store.updateConfig(ws.id, 'many', { config: { n } })),
      );
      expect(results.map((r) => r?.version).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(
        Array.from({ length: 30 }, (_, i) => i + 2),
      );
      const versions = await store.listConfigVersions(ws.id, 'many');
      expect(versions.map((v) => v.version)).toEqual(Array.from({ length: 31 }, (_, i) => i + 1));
    });

    it('an update racing a delete answers undefined, never an error, and adds no version', async () => {
      const { orgId, ws } = await tenant();
      for (let n = 0; n < 10; n++) {
        const created = await store.createConfig({
          organisation_id: orgId,
          workspace_id: ws.id,
          slug: `gone-${n}`,
          name: 'g',
          config: {},
        });
        const [updated, deleted] = await Promise.all([
          store.updateConfig(ws.id, created.id, { config: { n } }),
          store.deleteConfig(ws.id, created.id),
        ]);
        expect(deleted).toBe(true);
        expect(await store.getConfig(ws.id, created.id)).toBeUndefined();
        if (updated === undefined) {
          const [row] = await harness.raw('select count(*) as n from config_versions where config_id = ?', [
            created.id,
          ]);
          expect(Number(row.n)).toBe(1);
        }
      }
    });

    it('keeps slugs unique per workspace, isolates workspaces and deletes', async () => {
      const { orgId, ws, other } = await tenant();
      const input = {
        organisation_id: orgId,
        workspace_id: ws.id,
        slug: 'same',
        name: 's',
        config: { a: 1 },
      };
      const first = await store.createConfig(input);
      await expectCode(store.createConfig(input), 'conflict');
      const elsewhere = await store.createConfig({ ...input, workspace_id: other.id, config: { b: 2 } });

      expect(await store.getConfig(other.id, first.id)).toBeUndefined();
      expect(await store.getConfig(other.id, 'same')).toEqual(elsewhere);
      expect(await store.updateConfig(other.id, first.id, { name: 'x' })).toBeUndefined();
      expect(await store.listConfigVersions(other.id, first.id)).toEqual([]);
      expect((await store.listConfigs(ws.id)).map((c) => c.id)).toEqual([first.id]);

      expect(await store.deleteConfig(other.id, first.id)).toBe(false);
      expect(await store.deleteConfig(ws.id, 'same')).toBe(true);
      expect(await store.getConfig(ws.id, 'same')).toBeUndefined();
      expect(await store.listConfigs(ws.id)).toEqual([]);
      expect(await store.deleteConfig(ws.id, first.id)).toBe(false);
      const again = await store.createConfig(input);
      expect(again.version).toBe(1);
    });
  });

  describe('semantic cache entries', () => {
    const entry = (workspaceId: string, overrides: Partial<SemanticCacheEntry> = {}): SemanticCacheEntry => ({
      id: `sc_${randomBytes(6).toString('hex')}`,
      workspace_id: workspaceId,
      namespace: '',
      partition_key: 'p1',
      exact_key: 'x1',
      vector: new Float32Array([0.6, 0.8, -0.0001220703125]),
      answer: '{"kind":"json","body":{},"storedAt":1}',
      created_at_ms: 1_000,
      expires_at_ms: 10_000,
      ...overrides,
    });

    it('keeps vectors bit for bit, lists the fresh entries of a partition and deletes by entry, namespace and age', async () => {
      const { ws, other } = await tenant();
      const a = entry(ws.id);
      const expired = entry(ws.id, { expires_at_ms: 2_000 });
      const elsewhere = entry(ws.id, { partition_key: 'p2', namespace: 'team' });
      const foreign = entry(other.id);
      for (const e of [a, expired, elsewhere, foreign]) await store.insertSemanticCacheEntry(e);

      expect(await store.getSemanticCacheEntry(ws.id, a.id)).toEqual(a);
      expect(await store.getSemanticCacheEntry(other.id, a.id)).toBeUndefined();
      const listed = await store.listSemanticCachePartition(ws.id, 'p1', 5_000);
      expect(listed.map((e) => e.id)).toEqual([a.id]);
      expect(Array.from(listed[0].vector)).toEqual(Array.from(a.vector));
      // With a limit, the newest entries, still oldest first.
      const newer = entry(ws.id, { created_at_ms: 2_000 });
      const newest = entry(ws.id, { created_at_ms: 3_000 });
      for (const e of [newest, newer]) await store.insertSemanticCacheEntry(e);
      const limited = await store.listSemanticCachePartition(ws.id, 'p1', 5_000, 2);
      expect(limited.map((e) => e.id)).toEqual([newer.id, newest.id]);
      // The ids of a partition's fresh entries, and entries by id without their answers.
      expect((await store.listSemanticCacheIds(ws.id, 'p1', 5_000)).sort()).toEqual(
        [a.id, newer.id, newest.id].sort(),
      );
      const vectors = await store.getSemanticCacheVectors(ws.id, [a.id, foreign.id, 'sc_none']);
      expect(vectors.map((e) => e.id)).toEqual([a.id]);
      expect(vectors[0]).not.toHaveProperty('answer');
      expect(Array.from(vectors[0].vector)).toEqual(Array.from(a.vector));
      expect(await store.getSemanticCacheVectors(ws.id, [])).toEqual([]);

      expect(await store.deleteSemanticCacheEntry(other.id, a.id)).toBeUndefined();
      expect(await store.deleteSemanticCacheEntry(ws.id, a.id)).toEqual({
        id: a.id,
        workspace_id: ws.id,
        partition_key: 'p1',
      });
      expect(await store.deleteSemanticCacheNamespace(ws.id, 'team')).toEqual([
        { id: elsewhere.id, workspace_id: ws.id, partition_key: 'p2' },
      ]);
      expect(await store.deleteExpiredSemanticCacheEntries(5_000, 10)).toBeGreaterThanOrEqual(1);
      const removals = await store.deleteSemanticCacheWorkspace(ws.id);
      expect(removals.map((r) => r.id).sort()).toEqual([newer.id, newest.id].sort());
      expect(await store.listSemanticCacheIds(ws.id, 'p1', 0)).toEqual([]);
      expect(await store.getSemanticCacheEntry(ws.id, expired.id)).toBeUndefined();
      expect(await store.getSemanticCacheEntry(other.id, foreign.id)).toEqual(foreign);
    });
  });

  describe('logs', () => {
    const log = logRecord;

    async function allPages(query: Omit<Parameters<Store['listLogs']>[0], 'after'>): Promise<LogRecord[]> {
      const seen: LogRecord[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await store.listLogs({ ...query, after });
        seen.push(...page.data);
        if (!page.has_more) return seen;
        expect(page.data).toHaveLength(query.limit);
        after = page.data[page.data.length - 1].id;
      }
    }

    it('round-trips every field', async () => {
      const { ws } = await tenant();
      const record = log(ws.id, {
        parent_span_id: 'p1',
        span_name: 'chat',
        target: 'targets[1]',
        is_attempt: true,
        stream: true,
        ttfb_ms: 3.25,
        cached_tokens: 2,
        reasoning_tokens: 9_000_000_000,
        cost: 0.000123456789,
        retry_count: 2,
        status: 502,
        error_code: 'upstream_unreachable',
        error_message: 'boom',
        metadata: { user: 'u1', 'a.b': 'c' },
        request_body: { messages: [{ role: 'user', content: 'hi' }] },
        response_body: 'text body',
      });
      await store.insertLogs([record]);
      expect(await store.getLog(ws.id, record.id)).toEqual(record);
    });

    it('stores text holding U+0000 with U+FFFD in its place', async () => {
      const { ws } = await tenant();
      const record = log(ws.id, {
        model: 'gpt\u0000x',
        error_message: 'bad \u0000',
        metadata: { 'k\u0000': 'v\u0000' },
        response_body: 'text \u0000',
      });
      await store.insertLogs([record]);
      expect(await store.getLog(ws.id, record.id)).toEqual({
        ...record,
        model: 'gpt\uFFFDx',
        error_message: 'bad \uFFFD',
        metadata: { 'k\uFFFD': 'v\uFFFD' },
        // A body is stored as JSON, where U+0000 is the escape \u0000, which both databases keep.
      });
    });

    it('stores metadata holding a lone surrogate with U+FFFD in its place, and still searches it', async () => {
      const { ws } = await tenant();
      // x-gateway-metadata: {"k\ud800":"v\udc00"} parses to lone surrogates, which JSON text escapes and
      // PostgreSQL's jsonb (read by every metadata filter and search) refuses.
      const record = log(ws.id, { metadata: { 'k\ud800': 'v\udc00', team: 'a' } });
      const plain = log(ws.id, { metadata: { team: 'a' } });
      await store.insertLogs([record, plain]);
      expect((await store.getLog(ws.id, record.id))?.metadata).toEqual({ 'k\uFFFD': 'v\uFFFD', team: 'a' });
      const ids = async (query: Partial<Parameters<Store['listLogs']>[0]>) =>
        (await store.listLogs({ workspace_id: ws.id, limit: 10, ...query })).data.map((r) => r.id).sort();
      expect(await ids({ search: 'team' })).toEqual([record.id, plain.id].sort());
      expect(await ids({ metadata: { team: 'a' } })).toEqual([record.id, plain.id].sort());
    });

    it('stores a record whose model is longer than an index entry may be', async () => {
      const { ws } = await tenant();
      // A model name of a caller's own invention, random so that no compression makes it fit: the rollups'
      // key holds the model, and PostgreSQL's btree entries end at 2,704 bytes.
      const model = `made-up-${randomBytes(6_000).toString('base64')}`;
      const record = log(ws.id, { model });
      await store.insertLogs([record]);
      expect((await store.getLog(ws.id, record.id))?.model).toBe(model);
      const [summary] = await store.analytics({
        workspace_ids: [ws.id],
        period: 'hour',
        from_ms: record.created_at_ms - 3_600_000,
        to_ms: record.created_at_ms + 3_600_000,
        interval_ms: undefined,
        group_by: 'model',
        filters: {},
      });
      expect(summary).toMatchObject({ requests: 1, group: model.slice(0, 256) });
    });

    it('inserts a few thousand records in one batch quickly', async () => {
      const { ws } = await tenant();
      const records = Array.from({ length: 3000 }, (_, i) =>
        log(ws.id, { metadata: { n: String(i) }, request_body: { i, text: 'x'.repeat(200) } }),
      );
      const started = performance.now();
      await store.insertLogs(records);
      const elapsed = performance.now() - started;
      expect(elapsed).toBeLessThan(3_000);
      const [row] = await harness.raw('select count(*) as n from logs where workspace_id = ?', [ws.id]);
      expect(Number(row.n)).toBe(3000);
      await store.insertLogs([]);
    });

    it('pages newest first with ties broken by id, never skipping or repeating', async () => {
      const { ws } = await tenant();
      const records = Array.from({ length: 23 }, (_, i) =>
        log(ws.id, { created_at_ms: 1_800_000_000_000 + (i % 5) }),
      );
      // Insert in shuffled order so the result order cannot come from insertion order.
      await store.insertLogs([...records].sort(() => Math.random() - 0.5));
      const expected = [...records]
        .sort((a, b) => b.created_at_ms - a.created_at_ms || (a.id < b.id ? 1 : -1))
        .map((r) => r.id);
      for (const limit of [1, 4, 5, 23, 50]) {
        const seen = await allPages({ workspace_id: ws.id, limit });
        expect(seen.map((r) => r.id)).toEqual(expected);
      }
      const first = await store.listLogs({ workspace_id: ws.id, limit: 23 });
      expect(first.has_more).toBe(false);
      await expectCode(
        store.listLogs({ workspace_id: ws.id, limit: 5, after: 'log_missing' }),
        'invalid_query',
      );
    });

    it('filters by each field and by metadata, combined with paging', async () => {
      const { ws } = await tenant();
      const t = 1_750_000_000_000;
      const records = [
        log(ws.id, { created_at_ms: t, trace_id: 'tr-1', metadata: { env: 'prod', team: 'a' } }),
        log(ws.id, {
          created_at_ms: t + 1,
          trace_id: 'tr-1',
          provider: 'anthropic',
          model: 'claude',
          metadata: { env: 'prod', team: 'b' },
        }),
        log(ws.id, { created_at_ms: t + 2, status: 429, api_key_id: 'key_b', metadata: { env: 'dev' } }),
        log(ws.id, { created_at_ms: t + 3, metadata: { 'we"ird.key': "va%l_ue's", env: 'prod' } }),
        log(ws.id, { created_at_ms: t + 4, metadata: { envx: 'prod', note: '"env":"prod"' } }),
        log(ws.id, { created_at_ms: t + 5, metadata: { équipe: 'ÉQUIPE-Zür' } }),
      ];
      await store.insertLogs(records);
      const ids = async (q: Partial<Parameters<Store['listLogs']>[0]>) =>
        (await allPages({ workspace_id: ws.id, limit: 2, ...q })).map((r) =>
          records.findIndex((x) => x.id === r.id),
        );

      expect(await ids({})).toEqual([5, 4, 3, 2, 1, 0]);
      expect(await ids({ trace_id: 'tr-1' })).toEqual([1, 0]);
      expect(await ids({ provider: 'anthropic' })).toEqual([1]);
      expect(await ids({ model: 'claude' })).toEqual([1]);
      expect(await ids({ status: 429 })).toEqual([2]);
      expect(await ids({ api_key_id: 'key_b' })).toEqual([2]);
      expect(await ids({ from_ms: t + 1, to_ms: t + 3 })).toEqual([3, 2, 1]);
      expect(await ids({ metadata: { env: 'prod' } })).toEqual([3, 1, 0]);
      expect(await ids({ metadata: { env: 'prod', team: 'b' } })).toEqual([1]);
      expect(await ids({ metadata: { 'we"ird.key': "va%l_ue's" } })).toEqual([3]);
      expect(await ids({ metadata: { 'we"ird.key': "va_l%ue's" } })).toEqual([]);
      expect(await ids({ metadata: { env: 'pro' } })).toEqual([]);
      expect(await ids({ metadata: { env: 'prod' }, trace_id: 'tr-1', provider: 'openai' })).toEqual([0]);
      // Search: any case, inside a key or a value; % and _ literal.
      expect(await ids({ search: 'PRO' })).toEqual([4, 3, 1, 0]);
      expect(await ids({ search: 'team' })).toEqual([1, 0]);
      expect(await ids({ search: 'ird.K' })).toEqual([3]);
      expect(await ids({ search: 'l_ue' })).toEqual([3]);
      expect(await ids({ search: 'l%ue' })).toEqual([]);
      expect(await ids({ search: '"env"' })).toEqual([4]);
      expect(await ids({ search: 'prod', metadata: { team: 'b' } })).toEqual([1]);
      expect(await ids({ search: 'nowhere' })).toEqual([]);
      // Any case of any letter, not only ASCII ones.
      expect(await ids({ search: 'équipe-zür' })).toEqual([5]);
      expect(await ids({ search: 'ÉQUIPE' })).toEqual([5]);
      expect(await ids({ search: 'zÜR' })).toEqual([5]);
    });

    it('never shows one workspace the logs of another', async () => {
      const { ws, other } = await tenant();
      const mine = log(ws.id, { trace_id: 'shared-trace' });
      const theirs = log(other.id, { trace_id: 'shared-trace' });
      await store.insertLogs([mine, theirs]);
      expect(await store.getLog(ws.id, theirs.id)).toBeUndefined();
      expect(
        (await store.listLogs({ workspace_id: ws.id, trace_id: 'shared-trace', limit: 10 })).data.map(
          (r) => r.id,
        ),
      ).toEqual([mine.id]);
      await expectCode(store.listLogs({ workspace_id: ws.id, limit: 10, after: theirs.id }), 'invalid_query');
    });

    it('deletes the oldest records before a time in bounded batches, and nothing else', async () => {
      const { ws } = await tenant();
      const { ws: other } = await tenant();
      // Far older than any other test's records, so that this test's cutoff touches only its own.
      const at = (ms: number, workspace = ws.id) => log(workspace, { created_at_ms: 1_000 + ms });
      const old = [at(1), at(2), at(3), at(4, other.id), at(5), at(6, other.id), at(7)];
      const kept = [at(10), at(11, other.id), at(12)];
      await store.insertLogs([...kept, ...old]);

      const cutoff = 1_000 + 10;
      expect(await store.deleteLogsBefore(cutoff, 3)).toBe(3);
      const left = async () =>
        [
          ...(await allPages({ workspace_id: ws.id, limit: 50 })),
          ...(await allPages({ workspace_id: other.id, limit: 50 })),
        ]
          .map((record) => record.created_at_ms - 1_000)
          .sort((a, b) => a - b);
      // The oldest three went first.
      expect(await left()).toEqual([4, 5, 6, 7, 10, 11, 12]);
      expect(await store.deleteLogsBefore(cutoff, 3)).toBe(3);
      expect(await store.deleteLogsBefore(cutoff, 3)).toBe(1);
      expect(await store.deleteLogsBefore(cutoff, 3)).toBe(0);
      expect(await left()).toEqual([10, 11, 12]);
      expect(await store.getLog(ws.id, kept[0].id)).toBeDefined();
    });
  });
}

let logSeq = 0;
export function logRecord(workspaceId: string, overrides: Partial<LogRecord> = {}): LogRecord {
  logSeq += 1;
  const seq = logSeq;
  return {
    id: newId('log'),
    created_at_ms: 1_700_000_000_000 + seq,
    organisation_id: 'org',
    workspace_id: workspaceId,
    api_key_id: 'key_a',
    trace_id: `trace-${seq}`,
    span_id: `span-${seq}`,
    parent_span_id: null,
    span_name: null,
    method: 'POST',
    path: '/v1/chat/completions',
    endpoint: 'chat.completions',
    provider: 'openai',
    model: 'gpt-4o-mini',
    target: null,
    status: 200,
    is_attempt: false,
    stream: false,
    latency_ms: 12.5,
    ttfb_ms: null,
    prompt_tokens: 10,
    completion_tokens: 5,
    total_tokens: 15,
    cached_tokens: null,
    reasoning_tokens: null,
    cost: null,
    cache_status: 'MISS',
    cache_similarity: null,
    retry_count: 0,
    error_code: null,
    error_message: null,
    metadata: {},
    request_body: null,
    response_body: null,
    hook_results: null,
    prompt_id: null,
    prompt_version: null,
    ...overrides,
  };
}
