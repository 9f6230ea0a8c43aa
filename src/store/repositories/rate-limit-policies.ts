/**
 * Rate-limit policies. Every change is announced (`rate_limit_policy`), so each node's lookups drop the
 * workspace's cached policies and the next call is governed by the new ones.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { toNumber, toRateLimitPolicy } from '../rows.js';
import type { Database } from '../schema.js';
import type { RateLimitPolicyQuery, RateLimitPolicyRepository } from '../types.js';
import { announcerOf, assertWorkspaceOf, deleteRow, nowSeconds, type RepositoryContext } from './context.js';

function filtered(db: Kysely<Database>, query: RateLimitPolicyQuery) {
  let select = db.selectFrom('rate_limit_policies').where('workspace_id', '=', query.workspace_id);
  if (query.status !== undefined) select = select.where('status', '=', query.status);
  if (query.type !== undefined) select = select.where('type', '=', query.type);
  if (query.unit !== undefined) select = select.where('unit', '=', query.unit);
  return select;
}

export function createRateLimitPolicyRepository({
  db,
  changed,
}: RepositoryContext): RateLimitPolicyRepository {
  const announce = announcerOf(changed, 'rate_limit_policy');

  return {
    async createRateLimitPolicy(input) {
      await assertWorkspaceOf(db, input.organisation_id, input.workspace_id);
      const now = nowSeconds();
      const row = {
        id: randomUUID(),
        organisation_id: input.organisation_id,
        workspace_id: input.workspace_id,
        name: input.name,
        type: input.type,
        unit: input.unit,
        value: input.value,
        status: 'active',
        conditions: JSON.stringify(input.conditions),
        group_by: JSON.stringify(input.group_by),
        created_at: now,
        updated_at: now,
      };
      await db.insertInto('rate_limit_policies').values(row).execute();
      announce('created', row.workspace_id, row.id);
      return toRateLimitPolicy(row);
    },

    async getRateLimitPolicy(workspace_id, id) {
      const row = await db
        .selectFrom('rate_limit_policies')
        .selectAll()
        .where('workspace_id', '=', workspace_id)
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? toRateLimitPolicy(row) : undefined;
    },

    async findRateLimitPolicy(organisation_id, id) {
      const row = await db
        .selectFrom('rate_limit_policies')
        .selectAll()
        .where('organisation_id', '=', organisation_id)
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? toRateLimitPolicy(row) : undefined;
    },

    async listRateLimitPolicies(query) {
      let page = filtered(db, query).selectAll().orderBy('created_at').orderBy('id');
      if (query.limit !== undefined) page = page.limit(query.limit).offset(query.offset ?? 0);
      const [rows, count] = await Promise.all([
        query.limit === 0 ? Promise.resolve([]) : page.execute(),
        filtered(db, query)
          .select((eb) => eb.fn.countAll().as('total'))
          .executeTakeFirstOrThrow(),
      ]);
      return { data: rows.map(toRateLimitPolicy), total: toNumber(count.total as number | string) };
    },

    async updateRateLimitPolicy(workspace_id, id, patch) {
      const row = await db
        .updateTable('rate_limit_policies')
        .set({
          ...(patch.name !== undefined && { name: patch.name }),
          ...(patch.type !== undefined && { type: patch.type }),
          ...(patch.unit !== undefined && { unit: patch.unit }),
          ...(patch.value !== undefined && { value: patch.value }),
          ...(patch.status !== undefined && { status: patch.status }),
          ...(patch.conditions !== undefined && { conditions: JSON.stringify(patch.conditions) }),
          ...(patch.group_by !== undefined && { group_by: JSON.stringify(patch.group_by) }),
          updated_at: nowSeconds(),
        })
        .where('workspace_id', '=', workspace_id)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      if (!row) return undefined;
      announce('updated', workspace_id, id);
      return toRateLimitPolicy(row);
    },

    async deleteRateLimitPolicy(workspace_id, id) {
      if (!(await deleteRow(db, 'rate_limit_policies', workspace_id, id))) return false;
      announce('deleted', workspace_id, id);
      return true;
    },
  };
}
