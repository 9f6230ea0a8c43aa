/**
 * Stored provider credentials (virtual keys and catalog providers). The secret object is encrypted at
 * rest, bound to the row id; rows are soft-deleted so logs keep naming them.
 */
import type { Kysely, Selectable } from 'kysely';
import { mergeSettings } from '../credential-settings.js';
import { decryptSecret, encryptSecret } from '../crypto.js';
import { newId } from '../ids.js';
import { toCredential } from '../rows.js';
import type { CredentialsTable, Database } from '../schema.js';
import type { CredentialRepository, ProviderCredential } from '../types.js';
import {
  assertWorkspaceOf,
  inTransaction,
  insertOrConflict,
  nowSeconds,
  preferIdMatch,
  softDelete,
  type RepositoryContext,
  announcerOf,
} from './context.js';

type CredentialKind = ProviderCredential['kind'];

async function findCredentialRow(
  db: Kysely<Database>,
  workspaceId: string,
  kind: CredentialKind,
  slugOrId: string,
  /** Lock the rows until the transaction ends (PostgreSQL; SQLite runs one writer at a time anyway). */
  forUpdate = false,
): Promise<Selectable<CredentialsTable> | undefined> {
  let select = db
    .selectFrom('credentials')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', kind)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('id', '=', slugOrId), eb('slug', '=', slugOrId)]))
    .limit(2);
  if (forUpdate) select = select.forUpdate();
  return preferIdMatch(await select.execute(), slugOrId);
}

export function createCredentialRepository({
  db,
  kind: storeKind,
  keys,
  changed,
}: RepositoryContext): CredentialRepository {
  const announce = announcerOf(changed, 'credential');
  const encrypt = (id: string, secret: ProviderCredential['secret']) =>
    encryptSecret(keys.encryption, JSON.stringify(secret), id);
  const decrypt = (row: Selectable<CredentialsTable>): ProviderCredential =>
    toCredential(
      row,
      JSON.parse(
        decryptSecret(keys.encryption, row.secret_encrypted, row.id),
      ) as ProviderCredential['secret'],
    );

  return {
    async createCredential(input) {
      await assertWorkspaceOf(db, input.organisation_id, input.workspace_id);
      const now = nowSeconds();
      const id = newId(input.kind === 'virtual_key' ? 'vk' : 'prv');
      const row = {
        id,
        organisation_id: input.organisation_id,
        workspace_id: input.workspace_id,
        kind: input.kind,
        slug: input.slug,
        name: input.name,
        provider: input.provider,
        secret_encrypted: encrypt(id, input.secret),
        status: 'active',
        created_at: now,
        updated_at: now,
        deleted_at: null,
      };
      await insertOrConflict(
        () => db.insertInto('credentials').values(row).execute(),
        `A ${input.kind === 'virtual_key' ? 'virtual key' : 'provider'} with slug '${input.slug}' already exists`,
      );
      announce('created', row.workspace_id, id);
      return toCredential(row, structuredClone(input.secret));
    },

    async getCredential(workspace_id, kind, slugOrId) {
      const row = await findCredentialRow(db, workspace_id, kind, slugOrId);
      return row ? decrypt(row) : undefined;
    },

    async listCredentials(workspace_id, kind) {
      const rows = await db
        .selectFrom('credentials')
        .selectAll()
        .where('workspace_id', '=', workspace_id)
        .where('kind', '=', kind)
        .where('deleted_at', 'is', null)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(decrypt);
    },

    /**
     * `settings` are merged into the stored secret in the same transaction that writes it, the row locked
     * meanwhile: two PATCHes of different settings at once each keep the other's, where a merge read
     * before the write would put back what the other had just changed (a rotated api_key included). The
     * `check` judges the same locked row, so what it allows is what is written: a secret stored by another
     * PATCH since the caller read the credential is judged with it.
     */
    async updateCredential(workspace_id, kind, slugOrId, patch) {
      const updated = await inTransaction(db, async (trx) => {
        const current = await findCredentialRow(trx, workspace_id, kind, slugOrId, storeKind === 'postgres');
        if (!current) return undefined;
        let secret = patch.secret;
        if (patch.settings !== undefined || patch.check !== undefined) {
          const stored = decrypt(current);
          if (patch.settings !== undefined) secret = mergeSettings(secret ?? stored.secret, patch.settings);
          patch.check?.(secret ?? stored.secret, stored);
        }
        const row = await trx
          .updateTable('credentials')
          .set({
            ...(patch.name !== undefined && { name: patch.name }),
            ...(patch.provider !== undefined && { provider: patch.provider }),
            ...(patch.status !== undefined && { status: patch.status }),
            ...(secret !== undefined && { secret_encrypted: encrypt(current.id, secret) }),
            updated_at: nowSeconds(),
          })
          .where('workspace_id', '=', workspace_id)
          .where('id', '=', current.id)
          .where('deleted_at', 'is', null)
          .returningAll()
          .executeTakeFirst();
        return row ? decrypt(row) : undefined;
      });
      if (updated) announce('updated', workspace_id, updated.id);
      return updated;
    },

    async deleteCredential(workspace_id, kind, slugOrId) {
      const current = await findCredentialRow(db, workspace_id, kind, slugOrId);
      if (!current || !(await softDelete(db, 'credentials', workspace_id, current.id))) return false;
      announce('deleted', workspace_id, current.id);
      return true;
    },
  };
}
