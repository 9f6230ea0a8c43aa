/**
 * A stored config with each `prompt_id` target naming no provider or virtual key of its own put where its
 * calls go, as a call expands it (prompt-targets.ts): its prompt's destination, with the version its
 * reference selects now, and the target's own settings over the destination's root. What a store-time
 * check judges such a target's calls by where they meet a stored credential the config does not name
 * (credential-settings-dependents.ts).
 */
import type { Repositories } from '../../store/types.js';
import type { GatewayConfig, TargetConfig } from '../config/index.js';
import { isRecord } from '../config/model-judges.js';
import { destinationRoot, promptTargetReference } from '../named-documents.js';
import { inheritFrom } from '../routing/inherit.js';
import { selectPromptVersion, storedPrompts } from './prompt-reference.js';

export interface ExpandedPromptTargets {
  /** The config with its prompt_id targets expanded. */
  config: unknown;
  /** Each expanded target, to the target as the config writes it. */
  written: WeakMap<object, Record<string, unknown>>;
}

const paramsOf = (node: Record<string, unknown>) =>
  isRecord(node.override_params) ? node.override_params : {};

export async function expandStoredPromptTargets(
  store: Pick<Repositories, 'getConfig' | 'getPrompt' | 'getPromptVersion'>,
  workspaceId: string,
  config: unknown,
): Promise<ExpandedPromptTargets> {
  const written = new WeakMap<object, Record<string, unknown>>();
  const expand = async (node: unknown, parent?: TargetConfig): Promise<unknown> => {
    if (!isRecord(node)) return node;
    const effective = parent ? inheritFrom(parent, node as TargetConfig) : (node as TargetConfig);
    if (Array.isArray(node.targets)) {
      const targets: unknown[] = [];
      for (const child of node.targets) targets.push(await expand(child, effective));
      return { ...node, targets };
    }
    const reference = promptTargetReference(node as GatewayConfig, effective as GatewayConfig);
    if (reference === undefined) return node;
    const { version } = await selectPromptVersion(storedPrompts(store), workspaceId, reference);
    const destination = version && (await destinationRoot(store, workspaceId, version.prompt));
    if (!destination) return node;
    const { root } = destination;
    const expanded = { ...root, ...node, override_params: { ...paramsOf(root), ...paramsOf(node) } };
    written.set(expanded, node);
    return expanded;
  };
  return { config: await expand(config), written };
}
