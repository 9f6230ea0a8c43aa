/**
 * Stored configs and their versions. A config may carry provider credentials, so the config text of
 * both tables is encrypted at rest, bound to the config's id. Every `config` given to an update makes
 * a new version, even one equal to the current config.
 */
import type { Selectable } from 'kysely';
import { decryptSecret, encryptSecret } from '../crypto.js';
import { newId } from '../ids.js';
import { toConfig, toConfigVersion } from '../rows.js';
import type { ConfigsTable } from '../schema.js';
import type { ConfigRepository } from '../types.js';
import {
  assertWorkspaceOf,
  inTransaction,
  insertOrConflict,
  nowSeconds,
  findLiveRow,
  softDelete,
  type RepositoryContext,
  announcerOf,
} from './context.js';

export function createConfigRepository({ db, keys, changed }: RepositoryContext): ConfigRepository {
  const announce = announcerOf(changed, 'config');
  const encrypt = (id: string, config: Record<string, unknown>) =>
    encryptSecret(keys.encryption, JSON.stringify(config), id);
  const decrypt = (id: string, text: string) =>
    JSON.parse(decryptSecret(keys.encryption, text, id)) as Record<string, unknown>;
  const decryptRow = (row: Selectable<ConfigsTable>) => toConfig(row, decrypt(row.id, row.config));

  return {
    async createConfig(input) {
      await assertWorkspaceOf(db, input.organisation_id, input.workspace_id);
      const now = nowSeconds();
      const id = newId('cfg');
      const configText = encrypt(id, input.config);
      const row = {
        id,
        organisation_id: input.organisation_id,
        workspace_id: input.workspace_id,
        slug: input.slug,
        name: input.name,
        config: configText,
        version: 1,
        status: 'active',
        created_at: now,
        updated_at: now,
        deleted_at: null,
      };
      await insertOrConflict(
        () =>
          inTransaction(db, async (trx) => {
            await trx.insertInto('configs').values(row).execute();
            await trx
              .insertInto('config_versions')
              .values({ config_id: row.id, version: 1, config: configText, created_at: now })
              .execute();
          }),
        `A config with slug '${input.slug}' already exists`,
      );
      announce('created', row.workspace_id, id);
      return toConfig(row, input.config);
    },

    async getConfig(workspace_id, slugOrId) {
      const row = await findLiveRow(db, 'configs', workspace_id, slugOrId);
      return row ? decryptRow(row) : undefined;
    },

    async listConfigs(workspace_id) {
      const rows = await db
        .selectFrom('configs')
        .selectAll()
        .where('workspace_id', '=', workspace_id)
        .where('deleted_at', 'is', null)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(decryptRow);
    },

    async updateConfig(workspace_id, slugOrId, patch) {
      const updated = await inTransaction(db, async (trx) => {
        const current = await findLiveRow(trx, 'configs', workspace_id, slugOrId);
        if (!current) return undefined;
        const now = nowSeconds();
        const configText = patch.config !== undefined ? encrypt(current.id, patch.config) : undefined;
        // Incrementing in the UPDATE (not from the value read above) keeps two concurrent updates
        // from claiming the same version number.
        const row = await trx
          .updateTable('configs')
          .set((eb) => ({
            ...(patch.name !== undefined && { name: patch.name }),
            ...(patch.status !== undefined && { status: patch.status }),
            ...(configText !== undefined && { config: configText, version: eb('version', '+', 1) }),
            updated_at: now,
          }))
          .where('workspace_id', '=', workspace_id)
          .where('id', '=', current.id)
          // Deleted since it was read (PostgreSQL): gone, like a config that was never there.
          .where('deleted_at', 'is', null)
          .returningAll()
          .executeTakeFirst();
        if (!row) return undefined;
        if (configText !== undefined) {
          await trx
            .insertInto('config_versions')
            .values({ config_id: row.id, version: row.version, config: configText, created_at: now })
            .execute();
        }
        return decryptRow(row);
      });
      // After the commit, so whoever drops a cached copy on hearing it cannot reload the old one.
      if (updated) announce('updated', workspace_id, updated.id);
      return updated;
    },

    async listConfigVersions(workspace_id, slugOrId) {
      const config = await findLiveRow(db, 'configs', workspace_id, slugOrId);
      if (!config) return [];
      const rows = await db
        .selectFrom('config_versions')
        .selectAll()
        .where('config_id', '=', config.id)
        .orderBy('version')
        .execute();
      return rows.map((row) => toConfigVersion(row, decrypt(row.config_id, row.config)));
    },

    async deleteConfig(workspace_id, slugOrId) {
      const current = await findLiveRow(db, 'configs', workspace_id, slugOrId);
      if (!current || !(await softDelete(db, 'configs', workspace_id, current.id))) return false;
      announce('deleted', workspace_id, current.id);
      return true;
    },
  };
}
