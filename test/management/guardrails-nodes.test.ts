/**
 * Two gateway nodes on one PostgreSQL schema and one Redis prefix: a guardrail changed through one node's
 * management API is what the other node's engine reads (lookups.guardrailBySlug) and enforces at once,
 * though that node holds the old version in a cache that would keep it for ten minutes.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseMasterKey } from '../../src/store/crypto.js';
import { openStore } from '../../src/store/index.js';
import type { Store, StoredGuardrail } from '../../src/store/types.js';
import { APIError } from 'openai';
import { client as sdkClient, target } from '../routing/support.js';
import { describeWithPostgres, postgresUrl } from '../helpers/postgres.js';
import { describeWithRedis } from '../helpers/redis.js';
import { PROPAGATION_DEADLINE_MS, readUntil, twoNodesSharingStores } from '../helpers/two-nodes.js';
import { client, type Client } from './http.js';

const blockList = (words: string[]) => ({ 'default.contains': { operator: 'none', words }, deny: true });

describeWithPostgres('stored guardrails on two nodes (PostgreSQL)', () => {
  describeWithRedis('sharing PostgreSQL and Redis', () => {
    const nodes = twoNodesSharingStores('guardrail-nodes');
    let onA: Client;
    /** The same database reached by a process that announces nothing to the nodes (no Redis). */
    let silent: Store;

    beforeAll(async () => {
      onA = client(nodes.a.url, nodes.env.GATEWAY_ADMIN_KEY);
      silent = await openStore({
        databaseUrl: postgresUrl(),
        dataDir: '/nonexistent',
        masterKey: parseMasterKey(nodes.env.GATEWAY_MASTER_KEY),
        pgSchema: nodes.schema,
      });
    });
    afterAll(async () => {
      await silent?.close();
    });

    /** Node B's engine view of the guardrail, read until `until` holds or the deadline passes. */
    const onBUntil = (
      workspaceId: string,
      slug: string,
      until: (guardrail: StoredGuardrail | undefined) => boolean,
    ): Promise<StoredGuardrail | undefined> =>
      readUntil(() => nodes.b.server.deps.lookups.guardrailBySlug(workspaceId, slug), until);

    /**
     * Watches the invalidations node B applies from other nodes (its bus calls `lookups.applyRemote` for each;
     * the wrapper only records them): `applied(workspaceId)` resolves once one for that workspace has been.
     */
    function watchRemoteInvalidations(): { applied(workspaceId: string): Promise<void>; stop(): void } {
      const lookups = nodes.b.server.deps.lookups;
      const apply = lookups.applyRemote;
      const workspaces: string[] = [];
      lookups.applyRemote = (event) => {
        apply(event);
        if (event.kind === 'workspace') workspaces.push(event.workspaceId);
      };
      return {
        async applied(workspaceId) {
          const deadline = Date.now() + PROPAGATION_DEADLINE_MS;
          while (!workspaces.includes(workspaceId)) {
            if (Date.now() > deadline) throw new Error('node B applied no invalidation of the workspace');
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
        },
        stop: () => {
          lookups.applyRemote = apply;
        },
      };
    }

    it('an update or a delete on node A is what node B reads next, not its cached copy', async () => {
      const invalidations = watchRemoteInvalidations();
      const created = await onA.post('/guardrails', { slug: 'shared-policy', guardrail: blockList(['v1']) });
      expect(created.status, created.text).toBe(200);
      const workspaceId = created.body.workspace_id as string;
      const lookupsB = nodes.b.server.deps.lookups;
      // The creation's invalidation reaches node B on its own time; were it to land after node B has loaded
      // version 1 below, it would drop that copy and the check of the cache would read the store instead.
      try {
        await invalidations.applied(workspaceId);
      } finally {
        invalidations.stop();
      }

      // Node B loads version 1 into its cache.
      expect(await lookupsB.guardrailBySlug(workspaceId, 'shared-policy')).toMatchObject({
        version: 1,
        guardrail: blockList(['v1']),
      });
      // A change nobody announces is not seen: node B really answers from its cache.
      await silent.updateGuardrail(workspaceId, 'shared-policy', { guardrail: blockList(['unannounced']) });
      expect((await lookupsB.guardrailBySlug(workspaceId, 'shared-policy'))?.version).toBe(1);

      const updated = await onA.patch('/guardrails/shared-policy', { guardrail: blockList(['v3']) });
      expect(updated.status, updated.text).toBe(200);
      expect(updated.body.version).toBe(3);
      const afterUpdate = await onBUntil(workspaceId, 'shared-policy', (g) => g?.version !== 1);
      expect(afterUpdate).toMatchObject({ version: 3, guardrail: blockList(['v3']) });

      expect((await onA.delete('/guardrails/shared-policy')).status).toBe(200);
      expect(await onBUntil(workspaceId, 'shared-policy', (g) => g === undefined)).toBeUndefined();
    });

    it('a config naming a stored guardrail is enforced on node B as node A last changed it', async () => {
      const created = await onA.post('/guardrails', {
        slug: 'enforced-policy',
        guardrail: blockList(['alpha']),
      });
      expect(created.status, created.text).toBe(200);
      const workspaceId = created.body.workspace_id as string;
      const config = target(nodes.fake, { input_guardrails: ['enforced-policy'] });
      const ask = (content: string) =>
        sdkClient(nodes.b, config, {
          'x-gateway-api-key': nodes.env.GATEWAY_ADMIN_KEY,
        }).chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content }],
        });
      const denied = async (content: string) => {
        const calls = nodes.fake.requests.length;
        const error = await ask(content).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(nodes.fake.requests.length, 'the provider was called for a denied request').toBe(calls);
        return error instanceof APIError ? error.status : error;
      };

      // Version 1 on node B: "alpha" is refused before the call, "beta" goes through.
      expect(await denied('say alpha')).toBe(446);
      expect((await ask('say beta')).choices[0].message.content).toBeTruthy();

      // Node A blocks "beta" instead; node B enforces the new version once the change has crossed Redis.
      expect(
        (await onA.patch('/guardrails/enforced-policy', { guardrail: blockList(['beta']) })).status,
      ).toBe(200);
      await onBUntil(workspaceId, 'enforced-policy', (g) => g?.version === 2);
      expect(await denied('say beta')).toBe(446);
      expect((await ask('say alpha')).choices[0].message.content).toBeTruthy();

      // Deleted on node A: node B refuses the config rather than run without the guardrail.
      expect((await onA.delete('/guardrails/enforced-policy')).status).toBe(200);
      await onBUntil(workspaceId, 'enforced-policy', (g) => g === undefined);
      const gone = await ask('say gamma').then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(gone).toBeInstanceOf(APIError);
      expect((gone as APIError).status).toBe(400);
      expect((gone as APIError).message).toContain("stored guardrail 'enforced-policy' not found");
    });

    it('a rename on node A, which makes no new version, reaches node B too', async () => {
      const first = await onA.post('/guardrails', { slug: 'first-policy', guardrail: blockList(['a']) });
      const workspaceId = first.body.workspace_id as string;
      expect((await nodes.b.server.deps.lookups.guardrailBySlug(workspaceId, 'first-policy'))?.version).toBe(
        1,
      );
      const renamed = await onA.patch('/guardrails/first-policy', { name: 'First policy' });
      expect(renamed.body).toMatchObject({ version: 1, name: 'First policy' });
      const seen = await onBUntil(workspaceId, 'first-policy', (g) => g?.name === 'First policy');
      expect(seen).toMatchObject({ name: 'First policy', version: 1 });
    });
  });
});
