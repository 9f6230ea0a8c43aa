/**
 * Which workspace a management call acts on when it may name one (`workspace_id`, `organisation_id`):
 * the caller's own unless it names another, which only an organisation-level admin key may do. An
 * organisation-level key is an admin key of the organisation's home workspace — the one created with the
 * organisation (slug `default`, else the oldest), where `GATEWAY_ADMIN_KEY` and the first start's key live;
 * the admin key a new workspace comes with manages that workspace only, and naming any other workspace,
 * whether there is one by that name or not, is a 403 for it. Another organisation is never seen: naming
 * it, or (for an organisation-level key) a workspace outside the caller's organisation, is a 404.
 */
import { GatewayError } from '../../../core/errors.js';
import type { ApiKey, Store, Workspace } from '../../../store/types.js';

export interface Tenant {
  organisation_id: string;
  workspace_id: string;
}

export function homeWorkspace(workspaces: readonly Workspace[]): Workspace | undefined {
  return workspaces.find((workspace) => workspace.slug === 'default') ?? workspaces[0];
}

/** Whether `caller` is an organisation-level admin key: an admin key of its organisation's home workspace. */
export function isOrganisationAdmin(caller: ApiKey, workspaces: readonly Workspace[]): boolean {
  return caller.role === 'admin' && homeWorkspace(workspaces)?.id === caller.workspace_id;
}

export async function tenantOf(
  store: Store,
  caller: ApiKey,
  named: { workspace_id?: string | undefined; organisation_id?: string | undefined },
): Promise<Tenant> {
  const own = { organisation_id: caller.organisation_id, workspace_id: caller.workspace_id };
  // A UUID's hex digits may come in either case (RFC 9562); the gateway's own are lower-case.
  if (
    named.organisation_id !== undefined &&
    named.organisation_id.toLowerCase() !== caller.organisation_id.toLowerCase()
  ) {
    throw new GatewayError('not_found', `No organisation "${named.organisation_id}"`, {
      param: 'organisation_id',
    });
  }
  const wanted = named.workspace_id;
  if (wanted === undefined || wanted === caller.workspace_id) return own;
  const workspaces = await store.listWorkspaces(caller.organisation_id);
  const workspace = workspaces.find((w) => w.id === wanted) ?? workspaces.find((w) => w.slug === wanted);
  if (workspace?.id === caller.workspace_id) return own;
  // Asked before whether the workspace exists: a key that may not act on other workspaces is not told
  // which of them there are.
  if (!isOrganisationAdmin(caller, workspaces)) {
    throw new GatewayError(
      'forbidden',
      "Only an organisation-level admin key (an admin key of the organisation's home workspace) may act on another workspace",
      { param: 'workspace_id' },
    );
  }
  if (!workspace) {
    throw new GatewayError('not_found', `No workspace "${wanted}" in this organisation`, {
      param: 'workspace_id',
    });
  }
  return { organisation_id: caller.organisation_id, workspace_id: workspace.id };
}
