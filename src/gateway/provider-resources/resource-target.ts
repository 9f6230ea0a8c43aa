/**
 * Which provider a call of a provider's own APIs (Files, fine-tuning jobs, Batch API) goes to: the one the
 * request's routing names, resolved like a model call's target (`x-gateway-config`, `x-gateway-provider`
 * with `Authorization`, `x-gateway-virtual-key`). Such work lives in exactly one provider account, so a
 * config with several targets gives its first (depth first, parent settings inherited); loadbalance,
 * fallback and conditions do not apply. The account is named by a hash of the provider's address and the
 * credentials sent to it, never the credentials themselves.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../../core/errors.js';
import type { ProviderResourceApi, ProviderResourceKind } from '../../providers/types.js';
import type { TargetConfig } from '../config/index.js';
import type { GatewayDeps } from '../deps.js';
import { bearerToken, paramFor, resolveRequestConfig } from '../request-config.js';
import { resolveTarget, type ResolvedTarget } from '../resolve-target.js';
import { childPath, inheritFrom } from '../routing/inherit.js';

export interface ResourceTarget extends ResolvedTarget {
  resources: ProviderResourceApi;
  /** The provider account: a hash of the adapter, its base URL and the credentials it is sent. */
  account: string;
}

const LABELS: Record<ProviderResourceKind, string> = {
  files: 'Files',
  fine_tuning: 'fine-tuning',
  fine_tuning_pause: 'fine-tuning pause and resume',
  batches: 'Batch',
};

/** The first leaf of the config tree, with its ancestors' settings. */
function firstLeaf(node: TargetConfig, path: string): { node: TargetConfig; path: string } {
  const targets = node.targets;
  if (!targets || targets.length === 0) return { node, path };
  return firstLeaf(inheritFrom(node, targets[0]), childPath(path, 0));
}

export function accountOf(resolved: ResolvedTarget, resources: ProviderResourceApi): string {
  const probe = resources.buildRequest({ method: 'GET', path: '/', headers: {}, target: resolved.target });
  const url = new URL(probe.url);
  url.search = '';
  const hash = createHash('sha256');
  hash.update(JSON.stringify([resolved.adapter.id, url.toString(), probe.headers]));
  return hash.digest('base64url');
}

/** The key of a node that chose its provider: `provider` when it names one, else its virtual key (whose
 * stored provider applies, resolve-target.ts). */
function choosingKey(node: TargetConfig): 'provider' | 'virtual_key' {
  return typeof node.provider !== 'string' && typeof node.virtual_key === 'string'
    ? 'virtual_key'
    : 'provider';
}

/** The target of a request for `kind`; 400 naming the provider when it has no such API. */
export async function resourceTarget(
  deps: GatewayDeps,
  headers: IncomingHttpHeaders,
  workspaceId: string,
  kind: ProviderResourceKind,
): Promise<ResourceTarget> {
  const { config } = await resolveRequestConfig(headers, workspaceId, deps.lookups);
  const leaf = firstLeaf(config, '');
  const resolved = await resolveTarget(
    leaf.node,
    leaf.path,
    workspaceId,
    bearerToken(headers),
    deps.lookups,
    deps.settings.customHostPolicy,
  );
  const resources = resolved.adapter.resources;
  if (!resources?.kinds.includes(kind)) {
    throw new GatewayError(
      'unsupported_endpoint',
      `Provider "${resolved.adapter.id}" has no ${LABELS[kind]} API the gateway can use ` +
        '(OpenAI and Azure OpenAI have one)',
      { param: paramFor(leaf.node, leaf.path, choosingKey(leaf.node)) },
    );
  }
  return { ...resolved, resources, account: accountOf(resolved, resources) };
}
