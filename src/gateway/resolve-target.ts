/**
 * Turns one node of the config tree into something callable: the adapter and the provider settings
 * (ProviderTarget), after resolving a virtual key or an `@slug` from the store and checking custom_host.
 */
import { findAdapter } from '../providers/registry.js';
import { PROVIDER_TARGET_KEYS, type ProviderAdapter, type ProviderTarget } from '../providers/types.js';
import type { TargetConfig } from './config/index.js';
import {
  movedHostMessage,
  movedHostSetting,
  movedProject,
  movedProjectMessage,
  STORED_SECRET_KEYS,
} from './credential-host.js';
import { checkCustomHost, customHostAccepted, type CustomHostPolicy } from './custom-host.js';
import { GatewayError } from '../core/errors.js';
import type { Lookups } from './lookups.js';
import type { ProviderCredential } from '../store/types.js';
import { paramFor } from './request-config.js';
import { providerBesideVirtualKey } from './virtual-key-provider.js';

/** The provider settings a target takes from its node or its stored credential. */
const TARGET_KEYS: ReadonlySet<string> = new Set(PROVIDER_TARGET_KEYS);

export interface ResolvedTarget {
  adapter: ProviderAdapter;
  target: ProviderTarget;
  /** The effective config node (parent settings already inherited). */
  node: TargetConfig;
  /** JSON path of the node in the config, e.g. `targets[1].targets[0]`; empty for the root. */
  path: string;
  /** The stored credential the node named (a virtual key, or a catalog provider's `@slug`), whichever of
   * its slug or its id the node gave: what rate-limit policies count the call by, one credential one name. */
  credential?: StoredCredentialName;
  /** The call goes with the client's own provider key: its Authorization is the target's `api_key`, and
   * neither the node nor a stored credential holds another credential (a key, a service account, access
   * keys). */
  clientKey?: true;
}

export interface StoredCredentialName {
  kind: ProviderCredential['kind'];
  id: string;
  slug: string;
}

/**
 * The target a node names. One that names its provider outright is resolved at once, with no promise
 * (most calls); a virtual key or an `@slug` is looked up first, and comes as a promise.
 */
export function resolveTarget(
  node: TargetConfig,
  path: string,
  workspaceId: string,
  /** The client's own provider key (Authorization: Bearer), for a target that has none. */
  clientApiKey: string | undefined,
  lookups: Lookups,
  policy: CustomHostPolicy,
): ResolvedTarget | Promise<ResolvedTarget> {
  const provider = typeof node.provider === 'string' ? node.provider : undefined;
  const where = { path, clientApiKey, policy };
  if (typeof node.virtual_key === 'string') {
    return withCredential(lookups, workspaceId, node, where, 'virtual_key', node.virtual_key, provider);
  }
  if (provider?.startsWith('@')) {
    return withCredential(lookups, workspaceId, node, where, 'provider', provider.slice(1), undefined);
  }
  return targetOf(node, where, {}, provider);
}

/**
 * A node's target with a stored credential's settings: its virtual key, or the catalog entry its `@slug`
 * names (the node field that named it is the credential's kind). Refused when the workspace has no such
 * active credential, and when the node names a `provider` besides a virtual key that is not the key's own
 * (virtual-key-provider.ts): checked here, where every endpoint resolves its target, so a stored config
 * written before the rule is refused too.
 */
function withCredential(
  lookups: Lookups,
  workspaceId: string,
  node: TargetConfig,
  where: TargetPlace,
  kind: ProviderCredential['kind'],
  slug: string,
  provider: string | undefined,
): Promise<ResolvedTarget> {
  return lookups.credential(workspaceId, kind, slug).then((credential) => {
    if (!credential || credential.status !== 'active') {
      const missing =
        kind === 'virtual_key'
          ? `No virtual key "${slug}" in this workspace`
          : `No provider "@${slug}" in this workspace's catalog`;
      throw new GatewayError('virtual_key_not_found', missing, { param: paramFor(node, where.path, kind) });
    }
    if (kind === 'virtual_key' && provider !== undefined) {
      const refusal = providerBesideVirtualKey(provider, slug, credential.provider);
      if (refusal !== undefined) {
        const param = paramFor(node, where.path, 'provider');
        const code = param.startsWith('config') ? 'invalid_config' : 'invalid_header';
        throw new GatewayError(code, `${param}: ${refusal}`, { param });
      }
    }
    const storedOn = kind === 'virtual_key' ? `virtual key "${slug}"` : `provider "@${slug}"`;
    const resolved = targetOf(node, { ...where, storedOn }, credential.secret, credential.provider);
    resolved.credential = { kind, id: credential.id, slug: credential.slug };
    return resolved;
  });
}

/** Where a target sits in the config, and what its resolution depends on besides the node. */
export interface TargetPlace {
  path: string;
  clientApiKey: string | undefined;
  policy: CustomHostPolicy;
  /** The stored credential the settings `stored` come from, as errors name it: `virtual key "vertex-prod"`. */
  storedOn?: string;
}

/** The adapter and provider settings of a node, with what a stored credential holds (`stored`): pure, so
 * that a change of the credential can be judged by what its nodes' calls would find
 * (credential-settings-dependents.ts). */
export function targetOf(
  node: TargetConfig,
  { path, clientApiKey, policy, storedOn }: TargetPlace,
  stored: Record<string, unknown>,
  provider: string | undefined,
): ResolvedTarget {
  // A field's name for an error is made only when there is an error (this runs for every call).
  const fields = node as Record<string, unknown>;
  if (!provider) {
    throw new GatewayError('missing_provider', 'The config names no provider for this target', {
      param: paramFor(node, path, 'provider'),
    });
  }
  const adapter = findAdapter(provider);
  if (!adapter) {
    throw new GatewayError('unknown_provider', `Unknown provider "${provider}"`, {
      param: paramFor(node, path, 'provider'),
    });
  }

  // A stored credential goes only to the host stored with it (credential-host.ts).
  const moved = movedHostSetting(fields, stored);
  if (moved === 'custom_host') {
    throw new GatewayError(
      'custom_host_refused',
      'Stored credentials are sent only to their own host: set custom_host on the virtual key or provider instead',
      { param: paramFor(node, path, 'custom_host') },
    );
  }
  if (moved !== undefined) {
    const param = paramFor(node, path, moved);
    throw new GatewayError('invalid_config', `${param}: ${movedHostMessage(moved)}`, { param });
  }
  // …and is used in its own Vertex AI project only (a service account may reach others).
  if (adapter.id === 'vertex-ai') {
    const project = movedProject(fields, stored);
    if (project !== undefined) {
      const param = paramFor(node, path, 'cloudb_project_id');
      const on = storedOn ?? 'stored vertex-ai credential';
      throw new GatewayError('forbidden', `${param}: ${movedProjectMessage(on, project)}`, { param });
    }
  }

  // Each provider setting the node or the credential holds, the node's unless it has none (`??`): read
  // from the few keys they have, not by asking both for every setting a provider may take.
  const target: ProviderTarget = { provider: adapter.id };
  const writable = target as unknown as Record<string, unknown>;
  for (const key in stored) {
    if (TARGET_KEYS.has(key) && stored[key] !== undefined) writable[key] = stored[key];
  }
  for (const key in fields) {
    if (TARGET_KEYS.has(key) && fields[key] !== undefined && fields[key] !== null)
      writable[key] = fields[key];
  }
  // The client's own key: its Authorization, taken by a target holding no key of its own or given as the
  // node's api_key by the request's headers (request-config.ts), with no other credential to sign the call.
  const clientKey =
    Boolean(clientApiKey) &&
    !holdsCredential(target) &&
    (target.api_key === undefined ||
      (typeof fields.api_key === 'string' && paramFor(node, path, 'api_key') === 'authorization'));
  if (target.api_key === undefined && clientApiKey) target.api_key = clientApiKey;
  // Where a refused host was written is looked for only when one is refused (this runs for every call).
  if (target.custom_host !== undefined && !customHostAccepted(target.custom_host, policy)) {
    refuseHost(target.custom_host, 'custom_host', '', { node, path, policy, storedOn });
  }
  // A service account's token endpoint is called too (Vertex AI's token exchange): held to the same policy.
  const tokenUri = target.cloudb_service_account_json?.token_uri;
  if (typeof tokenUri === 'string' && !customHostAccepted(tokenUri, policy)) {
    refuseHost(tokenUri, 'cloudb_service_account_json', '.token_uri', { node, path, policy, storedOn });
  }
  const resolved: ResolvedTarget = { adapter, target, node, path };
  if (clientKey) resolved.clientKey = true;
  return resolved;
}

/**
 * Refuses a host the target would call (`value`, the setting `key` or a field `below` it) that the policy
 * refuses, named as its user wrote it: the node's setting by its place in the config (or the header it came
 * from), a stored credential's by the credential's own field, after the credential it is set on.
 */
function refuseHost(
  value: string,
  key: string,
  below: string,
  {
    node,
    path,
    policy,
    storedOn,
  }: { node: TargetConfig; path: string; policy: CustomHostPolicy; storedOn?: string },
): void {
  const written = (node as Record<string, unknown>)[key];
  if (written !== undefined && written !== null) {
    checkCustomHost(value, policy, paramFor(node, path, key) + below);
    return;
  }
  const param = key + below;
  try {
    checkCustomHost(value, policy, param);
  } catch (err) {
    if (storedOn === undefined || !(err instanceof GatewayError)) throw err;
    throw new GatewayError(err.code, `${storedOn}: ${err.message}`, { param });
  }
}

/** The fields besides `api_key` that hold a credential: with any of them set, the node's or the stored one
 * signs the call (Vertex AI takes its service account before any key, Bedrock its access keys). */
const CREDENTIAL_KEYS = STORED_SECRET_KEYS.filter((key) => key !== 'api_key');

function holdsCredential(target: ProviderTarget): boolean {
  return CREDENTIAL_KEYS.some((key) => target[key] !== undefined);
}
