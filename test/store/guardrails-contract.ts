/**
 * Stored guardrails against every Store implementation (store.test.ts runs it on SQLite and
 * PostgreSQL): versions, slugs per workspace, encryption at rest and the change announcements the
 * lookup caches depend on.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import type { Store, StoreChange } from '../../src/store/types.js';
import { newTenant, type StoreHarness } from './store-contract.js';

const noSecrets = { 'default.contains': { operator: 'none', words: ['forbidden'] }, deny: true };
const webhook = (token: string) => ({
  'default.webhook': { webhookURL: 'https://hooks.example/check', headers: { Authorization: token } },
  deny: true,
});

export function guardrailsContract(makeHarness: () => Promise<StoreHarness>): void {
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

  const tenant = () => newTenant(store, 'Guarded');

  const create = (orgId: string, workspaceId: string, slug: string, guardrail: Record<string, unknown>) =>
    store.createGuardrail({ organisation_id: orgId, workspace_id: workspaceId, slug, name: slug, guardrail });

  describe('stored guardrails', () => {
    it('versions every new definition, by slug or id, and keeps the history', async () => {
      const { orgId, ws } = await tenant();
      const created = await store.createGuardrail({
        organisation_id: orgId,
        workspace_id: ws.id,
        slug: 'no-secrets',
        name: 'No secrets',
        guardrail: noSecrets,
      });
      expect(created).toMatchObject({
        slug: 'no-secrets',
        name: 'No secrets',
        version: 1,
        guardrail: noSecrets,
        workspace_id: ws.id,
        organisation_id: orgId,
      });
      expect(created.id).toMatch(/^grd_[0-9A-Z]{26}$/);
      expect(await store.getGuardrail(ws.id, 'no-secrets')).toEqual(created);
      expect(await store.getGuardrail(ws.id, created.id)).toEqual(created);

      const v2def = { ...noSecrets, deny: false };
      const v2 = await store.updateGuardrail(ws.id, 'no-secrets', { guardrail: v2def });
      expect(v2).toMatchObject({ id: created.id, version: 2, guardrail: v2def });
      const renamed = await store.updateGuardrail(ws.id, created.id, { name: 'Renamed' });
      expect(renamed).toMatchObject({ version: 2, name: 'Renamed', guardrail: v2def });
      // The same definition again is still a new version: an update is a deliberate act.
      const v3 = await store.updateGuardrail(ws.id, 'no-secrets', { guardrail: v2def });
      expect(v3?.version).toBe(3);
      expect(await store.getGuardrail(ws.id, 'no-secrets')).toEqual(v3);

      const versions = await store.listGuardrailVersions(ws.id, 'no-secrets');
      expect(versions.map((v) => [v.version, v.guardrail])).toEqual([
        [1, noSecrets],
        [2, v2def],
        [3, v2def],
      ]);
      expect(versions.every((v) => v.guardrail_id === created.id && typeof v.created_at === 'number')).toBe(
        true,
      );
    });

    it('keeps slugs unique per workspace; another workspace never sees, changes or deletes them', async () => {
      const { orgId, ws, other } = await tenant();
      const mine = await create(orgId, ws.id, 'shared-slug', noSecrets);
      const error = await create(orgId, ws.id, 'shared-slug', noSecrets).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).code).toBe('conflict');
      const theirs = await create(orgId, other.id, 'shared-slug', { ...noSecrets, deny: false });
      expect(theirs.id).not.toBe(mine.id);

      expect((await store.listGuardrails(ws.id)).map((g) => g.id)).toEqual([mine.id]);
      expect(await store.getGuardrail(other.id, mine.id)).toBeUndefined();
      expect(await store.updateGuardrail(other.id, mine.id, { name: 'stolen' })).toBeUndefined();
      expect(await store.listGuardrailVersions(other.id, mine.id)).toEqual([]);
      expect(await store.deleteGuardrail(other.id, mine.id)).toBe(false);
      expect(await store.getGuardrail(ws.id, 'shared-slug')).toEqual(mine);
      expect((await store.getGuardrail(other.id, 'shared-slug'))?.guardrail).toEqual({
        ...noSecrets,
        deny: false,
      });
    });

    it('refuses a workspace of another organisation', async () => {
      const { ws } = await tenant();
      const stranger = await store.createOrganisation({ name: 'Stranger' });
      const error = await create(stranger.id, ws.id, 'x', noSecrets).catch((e: unknown) => e);
      expect((error as GatewayError).code).toBe('not_found');
    });

    it('a deleted guardrail is gone from every read and frees its slug', async () => {
      const { orgId, ws } = await tenant();
      const first = await create(orgId, ws.id, 'short-lived', noSecrets);
      expect(await store.deleteGuardrail(ws.id, 'short-lived')).toBe(true);
      expect(await store.deleteGuardrail(ws.id, 'short-lived')).toBe(false);
      expect(await store.getGuardrail(ws.id, first.id)).toBeUndefined();
      expect(await store.listGuardrails(ws.id)).toEqual([]);
      expect(await store.updateGuardrail(ws.id, first.id, { guardrail: noSecrets })).toBeUndefined();
      const again = await create(orgId, ws.id, 'short-lived', { ...noSecrets, deny: false });
      expect(again.id).not.toBe(first.id);
      expect(again.version).toBe(1);
      expect((await store.listGuardrailVersions(ws.id, 'short-lived')).map((v) => v.version)).toEqual([1]);
    });

    it('gives concurrent updates distinct versions with no gaps', async () => {
      const { orgId, ws } = await tenant();
      await create(orgId, ws.id, 'race', noSecrets);
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, n) =>
          store.updateGuardrail(ws.id, 'race', { guardrail: { ...noSecrets, id: `v${n}` } }),
        ),
      );
      expect(results.map((r) => r?.version).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(
        Array.from({ length: 12 }, (_, i) => i + 2),
      );
      expect((await store.listGuardrailVersions(ws.id, 'race')).map((v) => v.version)).toEqual(
        Array.from({ length: 13 }, (_, i) => i + 1),
      );
    });

    it('keeps definitions encrypted at rest, versions included', async () => {
      const { orgId, ws } = await tenant();
      const token = `Bearer hook-token-${randomBytes(8).toString('hex')}`;
      const created = await create(orgId, ws.id, 'signed-hook', webhook(token));
      await store.updateGuardrail(ws.id, created.id, { guardrail: webhook(`${token}-2`) });
      const rows = [
        ...(await harness.raw('select * from guardrails where id = ?', [created.id])),
        ...(await harness.raw('select * from guardrail_versions where guardrail_id = ?', [created.id])),
      ];
      expect(rows).toHaveLength(3);
      for (const row of rows) {
        expect(JSON.stringify(row)).not.toContain('hook-token');
        expect(JSON.stringify(row)).not.toContain('default.webhook');
      }
      expect((await store.getGuardrail(ws.id, 'signed-hook'))?.guardrail).toEqual(webhook(`${token}-2`));
      const foreign = await harness.open(randomBytes(32));
      try {
        const error = await foreign.getGuardrail(ws.id, 'signed-hook').catch((e: unknown) => e);
        expect((error as GatewayError).code).toBe('internal_error');
      } finally {
        await foreign.close();
      }
    });

    it('announces created, updated and deleted once committed, and nothing for a no-op', async () => {
      const { orgId, ws } = await tenant();
      const heard: StoreChange[] = [];
      const stop = store.onChange((change) => heard.push(change));
      try {
        const created = await create(orgId, ws.id, 'announced', noSecrets);
        await store.updateGuardrail(ws.id, 'announced', { name: 'renamed' });
        await store.updateGuardrail(ws.id, 'announced', { guardrail: { ...noSecrets, deny: false } });
        await store.deleteGuardrail(ws.id, 'announced');
        await store.updateGuardrail(ws.id, 'announced', { name: 'gone' });
        await store.deleteGuardrail(ws.id, 'announced');
        await expect(
          store.transaction(async (tx) => {
            await tx.createGuardrail({
              organisation_id: orgId,
              workspace_id: ws.id,
              slug: 'rolled-back',
              name: 'r',
              guardrail: noSecrets,
            });
            throw new Error('roll back');
          }),
        ).rejects.toThrow('roll back');
        expect(await store.getGuardrail(ws.id, 'rolled-back')).toBeUndefined();

        const mine = heard.filter(
          (change) => change.workspace_id === ws.id && change.resource === 'guardrail',
        );
        expect(mine.map(({ action, id }) => [action, id])).toEqual([
          ['created', created.id],
          ['updated', created.id],
          ['updated', created.id],
          ['deleted', created.id],
        ]);
      } finally {
        stop();
      }
    });
  });
}
