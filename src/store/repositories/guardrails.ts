/**
 * Stored guardrails and their versions, kept the way configs are (configs.ts): every `guardrail` given
 * to an update makes a new version. A guardrail may carry credentials (a webhook check's `headers`), so
 * the definition in both tables is encrypted at rest, bound to the guardrail's id.
 */
import type { Selectable } from 'kysely';
import { decryptSecret, encryptSecret } from '../crypto.js';
import { newId } from '../ids.js';
import { toGuardrail, toGuardrailVersion } from '../rows.js';
import type { GuardrailsTable } from '../schema.js';
import type { GuardrailRepository } from '../types.js';
import {
  announcerOf,
  assertWorkspaceOf,
  inTransaction,
  insertOrConflict,
  nowSeconds,
  findLiveRow,
  softDelete,
  type RepositoryContext,
} from './context.js';

export function createGuardrailRepository({ db, keys, changed }: RepositoryContext): GuardrailRepository {
  const announce = announcerOf(changed, 'guardrail');
  const encrypt = (id: string, guardrail: Record<string, unknown>) =>
    encryptSecret(keys.encryption, JSON.stringify(guardrail), id);
  const decrypt = (id: string, text: string) =>
    JSON.parse(decryptSecret(keys.encryption, text, id)) as Record<string, unknown>;
  const decryptRow = (row: Selectable<GuardrailsTable>) => toGuardrail(row, decrypt(row.id, row.guardrail));

  return {
    async createGuardrail(input) {
      await assertWorkspaceOf(db, input.organisation_id, input.workspace_id);
      const now = nowSeconds();
      const id = newId('grd');
      const text = encrypt(id, input.guardrail);
      const row = {
        id,
        organisation_id: input.organisation_id,
        workspace_id: input.workspace_id,
        slug: input.slug,
        name: input.name,
        guardrail: text,
        version: 1,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      };
      await insertOrConflict(
        () =>
          inTransaction(db, async (trx) => {
            await trx.insertInto('guardrails').values(row).execute();
            await trx
              .insertInto('guardrail_versions')
              .values({ guardrail_id: id, version: 1, guardrail: text, created_at: now })
              .execute();
          }),
        `A guardrail with slug '${input.slug}' already exists`,
      );
      announce('created', row.workspace_id, id);
      return toGuardrail(row, input.guardrail);
    },

    async getGuardrail(workspace_id, slugOrId) {
      const row = await findLiveRow(db, 'guardrails', workspace_id, slugOrId);
      return row ? decryptRow(row) : undefined;
    },

    async listGuardrails(workspace_id) {
      const rows = await db
        .selectFrom('guardrails')
        .selectAll()
        .where('workspace_id', '=', workspace_id)
        .where('deleted_at', 'is', null)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(decryptRow);
    },

    async updateGuardrail(workspace_id, slugOrId, patch) {
      const updated = await inTransaction(db, async (trx) => {
        const current = await findLiveRow(trx, 'guardrails', workspace_id, slugOrId);
        if (!current) return undefined;
        const now = nowSeconds();
        const text = patch.guardrail !== undefined ? encrypt(current.id, patch.guardrail) : undefined;
        // Incremented in the UPDATE itself, so two concurrent updates never claim one version number.
        const row = await trx
          .updateTable('guardrails')
          .set((eb) => ({
            ...(patch.name !== undefined && { name: patch.name }),
            ...(text !== undefined && { guardrail: text, version: eb('version', '+', 1) }),
            updated_at: now,
          }))
          .where('workspace_id', '=', workspace_id)
          .where('id', '=', current.id)
          // Deleted since it was read (PostgreSQL): gone, like a guardrail that was never there.
          .where('deleted_at', 'is', null)
          .returningAll()
          .executeTakeFirst();
        if (!row) return undefined;
        if (text !== undefined) {
          await trx
            .insertInto('guardrail_versions')
            .values({ guardrail_id: row.id, version: row.version, guardrail: text, created_at: now })
            .execute();
        }
        return decryptRow(row);
      });
      // After the commit, so a node that drops its cached copy on hearing it cannot reload the old one.
      if (updated) announce('updated', workspace_id, updated.id);
      return updated;
    },

    async listGuardrailVersions(workspace_id, slugOrId) {
      const guardrail = await findLiveRow(db, 'guardrails', workspace_id, slugOrId);
      if (!guardrail) return [];
      const rows = await db
        .selectFrom('guardrail_versions')
        .selectAll()
        .where('guardrail_id', '=', guardrail.id)
        .orderBy('version')
        .execute();
      return rows.map((row) => toGuardrailVersion(row, decrypt(row.guardrail_id, row.guardrail)));
    },

    async deleteGuardrail(workspace_id, slugOrId) {
      const current = await findLiveRow(db, 'guardrails', workspace_id, slugOrId);
      if (!current || !(await softDelete(db, 'guardrails', workspace_id, current.id))) return false;
      announce('deleted', workspace_id, current.id);
      return true;
    },
  };
}
