/**
 * Rate-limit policies (docs/rate-limits.md): `POST /policies/rate-limits` → `{id, object}`, the list with
 * filters and pages, and get, update, delete by id. A policy governs the calls of its workspace; each route
 * works in the caller's workspace, or in the one `workspace_id` names (body for create, query otherwise)
 * when the caller is an organisation-level admin key (tenant.ts); a create naming none goes to the workspace
 * its `workspace_id` conditions name, if any (policyWorkspace), and one by id naming none finds the policy
 * in any workspace such a key may act on (policyOf). A change reaches every node's lookups at
 * once (store.onChange → lookups.applyChange, Redis between nodes).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../../../core/errors.js';
import type { GatewayDeps } from '../../../gateway/deps.js';
import { fieldError } from '../../../core/validator/compile-validator.js';
import type {
  ApiKey,
  RateLimitCondition,
  RateLimitPolicy,
  RateLimitPolicyQuery,
} from '../../../store/types.js';
import { integerQuery, type Query } from '../query-params.js';
import { validateCreateRateLimitPolicy, validateUpdateRateLimitPolicy } from './body-schemas.js';
import { notFound, pathParam, requireSomeField } from './route-helpers.js';
import { isOrganisationAdmin, tenantOf } from './tenant.js';
import { deletedView } from './views.js';

const OBJECT = 'policy_usage_limits';
/**
 * A list's page size when `page_size` is left out, and the most a page holds. The interface sets `page_size`
 * no maximum (an integer >= 0): a larger one is taken, as a fine-tuning job list takes any `limit`, and
 * answered `max` a page, `current_page` counting pages of that size, so that a client paging until it has
 * `total` items (or an empty page) sees every one.
 */
export const POLICY_PAGE_SIZE = { default: 100, max: 1000 } as const;

export function rateLimitPolicyView(policy: RateLimitPolicy) {
  return {
    object: OBJECT,
    id: policy.id,
    name: policy.name,
    type: policy.type,
    unit: policy.unit,
    value: policy.value,
    status: policy.status,
    workspace_id: policy.workspace_id,
    organisation_id: policy.organisation_id,
    conditions: policy.conditions,
    group_by: policy.group_by,
    created_at: new Date(policy.created_at * 1000).toISOString(),
    last_updated_at: new Date(policy.updated_at * 1000).toISOString(),
  };
}

function enumParam<T extends string>(query: Query, name: string, allowed: readonly T[]): T | undefined {
  const raw = query[name];
  if (raw === undefined || raw === '') return undefined;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new GatewayError('invalid_query', `${name} must be one of ${allowed.join(', ')}`, { param: name });
  }
  return raw as T;
}

function workspaceParam(query: Query): string | undefined {
  const raw = query.workspace_id;
  if (raw === undefined || raw === '') return undefined;
  if (raw.length > 128) {
    throw new GatewayError('invalid_query', 'workspace_id must be at most 128 characters', {
      param: 'workspace_id',
    });
  }
  return raw;
}

/** A workspace a `workspace_id` condition's `value` names exactly (not `*` or `…/*`), and the field naming it. */
interface NamedWorkspace {
  workspace_id: string;
  path: string;
}

/**
 * The conditions with each `workspace_id` value or exclusion that names a workspace of the organisation by
 * its slug (as the interface lets `workspace_id` be written elsewhere) written as that workspace's id, which
 * is what a call's `workspace_id` is: stored as a slug it would never match. `*` and `…/*` patterns stay
 * as they are. An organisation-level admin key may name any workspace of the organisation, and a value
 * naming none is refused with a 400 naming it; any other key may name only its own workspace, and naming
 * another is a 403 naming the value, the same whether that workspace exists or not, so that a workspace's
 * key does not learn the other workspaces' slugs and ids (tenant.ts). `named` lists the workspaces the
 * values name exactly, which decide the policy's workspace (policyWorkspace).
 */
async function conditionsWithWorkspaceIds(
  store: GatewayDeps['store'],
  caller: ApiKey,
  conditions: readonly RateLimitCondition[],
): Promise<{ conditions: RateLimitCondition[]; named: NamedWorkspace[] }> {
  const named: NamedWorkspace[] = [];
  if (!conditions.some((condition) => condition.key === 'workspace_id')) {
    return { conditions: [...conditions], named };
  }
  const all = await store.listWorkspaces(caller.organisation_id);
  const organisationWide = isOrganisationAdmin(caller, all);
  const workspaces = organisationWide ? all : all.filter((w) => w.id === caller.workspace_id);
  const idOf = (name: string, path: string, isValue: boolean): string => {
    if (name === '*' || name.endsWith('/*')) return name;
    const workspace = workspaces.find((w) => w.id === name) ?? workspaces.find((w) => w.slug === name);
    if (workspace) {
      if (isValue) named.push({ workspace_id: workspace.id, path });
      return workspace.id;
    }
    // Asked before whether the workspace exists: a key that may not act on other workspaces is not told
    // which of them there are.
    if (!organisationWide) {
      throw new GatewayError(
        'forbidden',
        `${path} may name only this key's own workspace: only an organisation-level admin key (an admin key of the organisation's home workspace) may name another`,
        { param: path },
      );
    }
    throw fieldError('invalid_body', path, `names no workspace of this organisation ("${name}")`);
  };
  const ids = (value: string | string[], path: string, isValue: boolean) =>
    typeof value === 'string' ? idOf(value, path, isValue) : value.map((name) => idOf(name, path, isValue));
  const resolved = conditions.map((condition, i) => {
    if (condition.key !== 'workspace_id') return condition;
    const path = `conditions[${i}]`;
    return {
      ...condition,
      value: ids(condition.value, `${path}.value`, true),
      ...(condition.excludes !== undefined && {
        excludes: ids(condition.excludes, `${path}.excludes`, false),
      }),
    };
  });
  return { conditions: resolved, named };
}

/**
 * The workspace a policy is in, as its `workspace_id` conditions have it. A policy governs the calls of its
 * own workspace only (the gateway loads a call's policies from the workspace of the call's key), so a
 * condition value naming another workspace could never hold. `fixed`, the workspace the body's
 * `workspace_id` names or an updated policy is in, must then be the one every exactly named workspace is:
 * another is refused with a 400 naming the value. Without it the conditions choose: the one workspace they
 * name (the interface's own example names the workspace to limit this way, with no `workspace_id` in the
 * body), or, naming none (only `*` or `…/*`, or no `workspace_id` condition), `undefined`, the caller's.
 * Two different workspaces are refused, as no call is in both.
 */
function policyWorkspace(named: readonly NamedWorkspace[], fixed?: { id: string; by: string }) {
  const [first] = named;
  if (first === undefined) return fixed?.id;
  const other = named.find((n) => n.workspace_id !== (fixed?.id ?? first.workspace_id));
  if (other === undefined) return first.workspace_id;
  const message = fixed
    ? `names a workspace other than ${fixed.by} ("${fixed.id}"): a policy governs the calls of its own workspace only`
    : `${other.path === first.path ? 'names two workspaces' : `names a workspace other than ${first.path}`}: a policy governs the calls of one workspace only (create one policy for each workspace)`;
  throw fieldError('invalid_body', other.path, message);
}

export async function registerRateLimitPolicyRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const { store } = deps;
  const path = '/policies/rate-limits';
  /** The workspace a route acts on: the caller's, or the one `?workspace_id=` names (tenant.ts). */
  const queryTenant = (request: FastifyRequest) =>
    tenantOf(store, request.gw.apiKey, { workspace_id: workspaceParam(request.query as Query) });

  app.post(path, async (request) => {
    const body = validateCreateRateLimitPolicy(request.body);
    const caller = request.gw.apiKey;
    let tenant = await tenantOf(store, caller, body);
    const { conditions, named } = await conditionsWithWorkspaceIds(store, caller, body.conditions);
    const chosen = policyWorkspace(
      named,
      body.workspace_id === undefined
        ? undefined
        : { id: tenant.workspace_id, by: 'the one workspace_id names' },
    );
    // A workspace the conditions chose: the caller may act on it (conditionsWithWorkspaceIds has refused
    // any other), and tenantOf checks it as it would the body's.
    if (chosen !== undefined && chosen !== tenant.workspace_id) {
      tenant = await tenantOf(store, caller, { ...body, workspace_id: chosen });
    }
    const policy = await store.createRateLimitPolicy({
      ...tenant,
      name: body.name ?? '',
      type: body.type,
      unit: body.unit,
      value: body.value,
      conditions,
      group_by: body.group_by,
    });
    return { id: policy.id, object: OBJECT };
  });

  app.get(path, async (request) => {
    const query = request.query as Query;
    const tenant = await queryTenant(request);
    const pageSize = Math.min(
      integerQuery(query, 'page_size', 0, Number.MAX_SAFE_INTEGER, POLICY_PAGE_SIZE.default),
      POLICY_PAGE_SIZE.max,
    );
    const listQuery: RateLimitPolicyQuery = {
      workspace_id: tenant.workspace_id,
      status: enumParam(query, 'status', ['active', 'archived'] as const) ?? 'active',
      type: enumParam(query, 'type', ['requests', 'tokens'] as const),
      unit: enumParam(query, 'unit', ['rpm', 'rph', 'rpd'] as const),
      limit: pageSize,
      offset: pageSize * integerQuery(query, 'current_page', 0, Number.MAX_SAFE_INTEGER, 0),
    };
    const { data, total } = await store.listRateLimitPolicies(listQuery);
    return { object: 'list', data: data.map(rateLimitPolicyView), total };
  });

  /**
   * The policy the path's id names, where the caller may see it. With `?workspace_id=`, in that workspace
   * (tenant.ts). Without, in the caller's own workspace, and for an organisation-level admin key in any
   * workspace of its organisation, as the interface's get, update and delete take the id alone (a UUID,
   * unique across them all). Anywhere else it is a 404, the same as for an id no policy has, so a
   * workspace's key does not learn what the other workspaces hold.
   */
  const policyOf = async (request: FastifyRequest): Promise<RateLimitPolicy> => {
    const id = pathParam(request.params, 'id');
    const caller = request.gw.apiKey;
    const named = workspaceParam(request.query as Query);
    if (named !== undefined) {
      const policy = await store.getRateLimitPolicy(
        (await tenantOf(store, caller, { workspace_id: named })).workspace_id,
        id,
      );
      if (!policy) throw notFound('rate-limit policy', id, 'id');
      return policy;
    }
    const own = await store.getRateLimitPolicy(caller.workspace_id, id);
    if (own) return own;
    if (isOrganisationAdmin(caller, await store.listWorkspaces(caller.organisation_id))) {
      const policy = await store.findRateLimitPolicy(caller.organisation_id, id);
      if (policy) return policy;
      throw new GatewayError('not_found', `No rate-limit policy "${id}" in this organisation`, {
        param: 'id',
      });
    }
    throw notFound('rate-limit policy', id, 'id');
  };

  app.get(`${path}/:id`, async (request) => rateLimitPolicyView(await policyOf(request)));

  const update = async (request: FastifyRequest) => {
    const id = pathParam(request.params, 'id');
    const body = validateUpdateRateLimitPolicy(request.body);
    requireSomeField(body, ['name', 'conditions', 'group_by', 'type', 'unit', 'value', 'status']);
    const { workspace_id } = await policyOf(request);
    let patch = body;
    if (body.conditions !== undefined) {
      const { conditions, named } = await conditionsWithWorkspaceIds(
        store,
        request.gw.apiKey,
        body.conditions,
      );
      policyWorkspace(named, { id: workspace_id, by: "the policy's own" });
      patch = { ...body, conditions };
    }
    const policy = await store.updateRateLimitPolicy(workspace_id, id, patch);
    if (!policy) throw notFound('rate-limit policy', id, 'id');
    return rateLimitPolicyView(policy);
  };
  app.put(`${path}/:id`, update);
  app.patch(`${path}/:id`, update);

  app.delete(`${path}/:id`, async (request) => {
    const id = pathParam(request.params, 'id');
    const deleted = await store.deleteRateLimitPolicy((await policyOf(request)).workspace_id, id);
    if (!deleted) throw notFound('rate-limit policy', id, 'id');
    return deletedView(OBJECT, id);
  });
}
