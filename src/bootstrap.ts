/**
 * First-start set-up: a default organisation and workspace, and an admin key. `GATEWAY_ADMIN_KEY` makes its
 * value a valid admin key (idempotent across restarts and nodes); with no key at all in the store, the first
 * start creates one and returns its value so it can be printed once.
 */
import type { Store, Workspace } from './store/types.js';

export interface BootstrapResult {
  workspace: Workspace;
  /** The value of a key created now, to be shown once; undefined when none was created. */
  createdKey: string | undefined;
}

export async function ensureDefaultWorkspace(store: Store): Promise<Workspace> {
  const [organisation] = await store.listOrganisations();
  const org = organisation ?? (await store.createOrganisation({ name: 'default' }));
  const workspaces = await store.listWorkspaces(org.id);
  return (
    workspaces.find((workspace) => workspace.slug === 'default') ??
    workspaces[0] ??
    (await store.createWorkspace({ organisation_id: org.id, name: 'Default', slug: 'default' }))
  );
}

/**
 * One node at a time (store.serialized): nodes starting together on an empty database would each find no
 * organisation, no workspace and no key, and each make its own.
 */
export function bootstrap(store: Store, adminKey: string | undefined): Promise<BootstrapResult> {
  return store.serialized('bootstrap', () => firstStart(store, adminKey));
}

async function firstStart(store: Store, adminKey: string | undefined): Promise<BootstrapResult> {
  const workspace = await ensureDefaultWorkspace(store);
  if (adminKey) {
    await store.createApiKey({
      organisation_id: workspace.organisation_id,
      workspace_id: workspace.id,
      name: 'admin (GATEWAY_ADMIN_KEY)',
      role: 'admin',
      value: adminKey,
    });
    return { workspace, createdKey: undefined };
  }
  if ((await store.countApiKeys()) > 0) return { workspace, createdKey: undefined };
  const { value } = await store.createApiKey({
    organisation_id: workspace.organisation_id,
    workspace_id: workspace.id,
    name: 'admin (first start)',
    role: 'admin',
  });
  return { workspace, createdKey: value };
}
