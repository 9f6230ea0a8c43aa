/**
 * Gateway API keys. Only an HMAC of a key's value is stored; `findApiKeyByValue`, `touchApiKey` and
 * `countApiKeys` are the only reads not scoped to a workspace, because they run before it is known.
 * Keys are deleted outright: their hash must stop matching at once.
 */
import { GatewayError } from '../../core/errors.js';
import { apiKeyDisplayPrefix, assertUsableApiKeyValue, generateApiKeyValue } from '../api-key-value.js';
import { hashApiKeyValue } from '../crypto.js';
import { newId } from '../ids.js';
import { toApiKey, toNumber } from '../rows.js';
import type { ApiKeyRepository } from '../types.js';
import { announcerOf, assertWorkspaceOf, deleteRow, nowSeconds, type RepositoryContext } from './context.js';

export function createApiKeyRepository({ db, keys, changed }: RepositoryContext): ApiKeyRepository {
  const announce = announcerOf(changed, 'api_key');

  const repository: ApiKeyRepository = {
    /**
     * With `value` given and already stored, the existing key is returned unchanged (whatever its
     * workspace or status): starting the gateway again with the same GATEWAY_ADMIN_KEY, or several
     * nodes starting at once, must not fail.
     */
    async createApiKey(input) {
      if (input.value !== undefined) assertUsableApiKeyValue(input.value);
      await assertWorkspaceOf(db, input.organisation_id, input.workspace_id);
      const value = input.value ?? generateApiKeyValue();
      const now = nowSeconds();
      const row = {
        id: newId('key'),
        organisation_id: input.organisation_id,
        workspace_id: input.workspace_id,
        name: input.name,
        role: input.role,
        key_hash: hashApiKeyValue(keys.apiKeyHash, value),
        key_prefix: apiKeyDisplayPrefix(value),
        status: 'active',
        created_at: now,
        updated_at: now,
        expires_at: input.expires_at ?? null,
        last_used_at: null,
        metadata: JSON.stringify(input.metadata ?? {}),
      };
      // ON CONFLICT rather than catching the unique violation: on PostgreSQL a failed statement
      // would abort the transaction this may be part of.
      const inserted = await db
        .insertInto('api_keys')
        .values(row)
        .onConflict((conflict) => conflict.column('key_hash').doNothing())
        .executeTakeFirst();
      if (toNumber(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) {
        announce('created', row.workspace_id, row.id);
        return { key: toApiKey(row), value };
      }
      const existing = await repository.findApiKeyByValue(value);
      if (!existing) throw new GatewayError('internal_error', 'An API key was neither stored nor found');
      return { key: existing, value };
    },

    async findApiKeyByValue(value) {
      const row = await db
        .selectFrom('api_keys')
        .selectAll()
        .where('key_hash', '=', hashApiKeyValue(keys.apiKeyHash, value))
        .executeTakeFirst();
      return row ? toApiKey(row) : undefined;
    },

    async getApiKey(workspace_id, id) {
      const row = await db
        .selectFrom('api_keys')
        .selectAll()
        .where('workspace_id', '=', workspace_id)
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? toApiKey(row) : undefined;
    },

    async listApiKeys(workspace_id) {
      const rows = await db
        .selectFrom('api_keys')
        .selectAll()
        .where('workspace_id', '=', workspace_id)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toApiKey);
    },

    async updateApiKey(workspace_id, id, patch) {
      const row = await db
        .updateTable('api_keys')
        .set({
          ...(patch.name !== undefined && { name: patch.name }),
          ...(patch.role !== undefined && { role: patch.role }),
          ...(patch.status !== undefined && { status: patch.status }),
          ...(patch.expires_at !== undefined && { expires_at: patch.expires_at }),
          ...(patch.metadata !== undefined && { metadata: JSON.stringify(patch.metadata) }),
          updated_at: nowSeconds(),
        })
        .where('workspace_id', '=', workspace_id)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      if (!row) return undefined;
      announce('updated', workspace_id, id);
      return toApiKey(row);
    },

    async rotateApiKey(workspace_id, id) {
      const value = generateApiKeyValue();
      const row = await db
        .updateTable('api_keys')
        .set({
          key_hash: hashApiKeyValue(keys.apiKeyHash, value),
          key_prefix: apiKeyDisplayPrefix(value),
          updated_at: nowSeconds(),
        })
        .where('workspace_id', '=', workspace_id)
        .where('id', '=', id)
        .where('status', '=', 'active')
        .returningAll()
        .executeTakeFirst();
      if (!row) return undefined;
      // Cached keys are held by value: every node drops them, so the old value stops working everywhere.
      announce('updated', workspace_id, id);
      return { key: toApiKey(row), value };
    },

    async deleteApiKey(workspace_id, id) {
      if (!(await deleteRow(db, 'api_keys', workspace_id, id))) return false;
      announce('deleted', workspace_id, id);
      return true;
    },

    async countApiKeys() {
      const row = await db
        .selectFrom('api_keys')
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .executeTakeFirstOrThrow();
      return toNumber(row.count);
    },

    async touchApiKey(id, at) {
      // Never move last_used_at backwards when touches from several nodes arrive out of order.
      await db
        .updateTable('api_keys')
        .set({ last_used_at: at })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
        .execute();
    },
  };
  return repository;
}
