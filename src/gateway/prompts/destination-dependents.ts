/**
 * What deleting a stored config or a stored prompt would break, the two naming each other: a prompt
 * version sends its calls to a stored config (`config: "<slug or id>"`), and a stored config's target names
 * a prompt (`"prompt_id": "slug@3"`). After the delete those calls fail (404), so the management API refuses
 * it (409 `conflict`, naming them) unless `?force=true`, as it does for a partial (partial-dependents.ts).
 *
 * Every version of a live prompt counts, not only its published and latest ones: any may be called
 * (`slug@3`). A config counts by its current version while it is active: that is what a call resolves,
 * and an archived config's calls fail already. Neither is indexed by what it names, so the workspace's
 * prompts' versions (or configs) are read; deletes are rare and a workspace holds few.
 */
import { GatewayError } from '../../core/errors.js';
import type { StoredConfig, StoredPrompt } from '../../store/types.js';
import type { GatewayDeps } from '../deps.js';
import { childPath } from '../routing/inherit.js';
import { NAMED, named, type Broken } from './partial-dependents.js';
import { referenceName } from './prompt-reference.js';

/** A node of a stored config and its path (`targets[1].targets[0]`, '' for the top), depth first. */
function* configNodes(node: unknown, path = ''): Generator<{ node: Record<string, unknown>; path: string }> {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return;
  const record = node as Record<string, unknown>;
  yield { node: record, path };
  if (!Array.isArray(record.targets)) return;
  for (const [i, child] of record.targets.entries()) yield* configNodes(child, childPath(path, i));
}

const configParam = (path: string, key: string) => `config${path ? `.${path}` : ''}.${key}`;

function more(count: number): string {
  return count > NAMED ? ` and ${count - NAMED} more` : '';
}

/** The versions of the workspace's live prompts that send their calls to the stored config. */
async function promptsSendingTo(deps: GatewayDeps, config: StoredConfig): Promise<Broken[]> {
  const { store } = deps;
  const names = new Set([config.slug, config.id]);
  const found: Broken[] = [];
  for (const prompt of await store.listPrompts(config.workspace_id)) {
    const versions = await store.listPromptVersions(config.workspace_id, prompt.id);
    const naming = versions.filter((v) => typeof v.prompt.config === 'string' && names.has(v.prompt.config));
    if (naming.length > 0) {
      found.push({ slug: prompt.slug, versions: naming.map((v) => v.version), reason: '' });
    }
  }
  return found;
}

/**
 * Refuses (409 `conflict`, `param` id) deleting a stored config that versions of prompts send their calls
 * to, naming them by slug with those versions (at most NAMED prompts, the rest counted).
 */
export async function refuseBreakingConfigDeletion(deps: GatewayDeps, config: StoredConfig): Promise<void> {
  if (config.status !== 'active') return;
  const found = await promptsSendingTo(deps, config);
  if (found.length === 0) return;
  throw new GatewayError(
    'conflict',
    `Deleting the config "${config.slug}" would make prompts that send their calls to it fail: ` +
      `${found.slice(0, NAMED).map(named).join(', ')}${more(found.length)}. ` +
      'Change them first, or send ?force=true to delete it anyway (the versions named then fail when called)',
    { param: 'id' },
  );
}

/** The active configs of the workspace with a target naming the prompt, each with the first place. */
async function configsNaming(
  deps: GatewayDeps,
  prompt: StoredPrompt,
): Promise<Array<{ slug: string; param: string }>> {
  const names = new Set([prompt.slug, prompt.id]);
  const found: Array<{ slug: string; param: string }> = [];
  for (const config of await deps.store.listConfigs(prompt.workspace_id)) {
    if (config.status !== 'active') continue;
    for (const { node, path } of configNodes(config.config)) {
      const promptId = node.prompt_id;
      if (typeof promptId !== 'string' || !names.has(referenceName(promptId))) continue;
      found.push({ slug: config.slug, param: configParam(path, 'prompt_id') });
      break;
    }
  }
  return found;
}

/**
 * Refuses (409 `conflict`, `param` id) deleting a prompt that targets of active stored configs name
 * (`prompt_id`), naming the configs by slug with where each names it (at most NAMED, the rest counted).
 */
export async function refuseBreakingPromptDeletion(deps: GatewayDeps, prompt: StoredPrompt): Promise<void> {
  const found = await configsNaming(deps, prompt);
  if (found.length === 0) return;
  const listed = found.slice(0, NAMED).map((config) => `"${config.slug}" (${config.param})`);
  throw new GatewayError(
    'conflict',
    `Deleting the prompt "${prompt.slug}" would make configs whose targets name it fail: ` +
      `${listed.join(', ')}${more(found.length)}. ` +
      'Change them first, or send ?force=true to delete it anyway (calls through the configs named then fail)',
    { param: 'id' },
  );
}
