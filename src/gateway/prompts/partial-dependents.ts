/**
 * The prompts a change to a partial would break: deleting it, or publishing a version that no longer fits
 * where they include it (a quote closing their JSON string, a partial it names that does not exist …).
 * Every version of a live prompt counts, not only its published and latest ones: any may be called
 * (`slug@3`, a config target's `"prompt_id": "slug@3"`). A version counts when its check (as when it was
 * stored) passes with the partial as it is and fails with the partial as it would be after the change.
 *
 * The versions checked are found by name through what the store records of each version
 * (`includes`: the partials its text names), never by reading every prompt of the workspace: those that
 * include the partial by its slug or id, or include a partial that does (in any of its versions), through
 * any number of partials.
 */
import { GatewayError } from '../../core/errors.js';
import type { Store, StoredPromptPartial } from '../../store/types.js';
import type { GatewayDeps } from '../deps.js';
import { partialLoader } from './prompt-call.js';
import { parsePromptReference, type VersionSelector } from './prompt-reference.js';
import { includedPartials } from './prompt-template.js';
import { checkPromptDocument, type LoadedPartial, type PartialLoader } from './render-prompt.js';

/** How many prompts (or configs) an error names; the rest are counted. */
export const NAMED = 10;

/** What the partial is after the change, for a use of it with this selector: `undefined` when deleted,
 * 'unchanged' when the change does not reach that use. */
export type PartialAfter = (selector: VersionSelector) => LoadedPartial | undefined | 'unchanged';

export interface Broken {
  slug: string;
  versions: number[];
  reason: string;
}

/** The partials a stored text includes; none for a text that no longer parses (it includes nothing a
 * call could render). */
export function includesOf(text: string): string[] {
  try {
    return includedPartials(text);
  } catch (err) {
    if (err instanceof GatewayError) return [];
    throw err;
  }
}

/** Records what the workspace's versions stored without their includes include. */
async function recordMissingIncludes(store: Store, workspaceId: string): Promise<void> {
  for (const version of await store.listUnindexedPromptPartialVersions(workspaceId)) {
    const names = includesOf(version.partial.string);
    await store.recordPromptPartialVersionIncludes(workspaceId, version.partial_id, version.version, names);
  }
  for (const version of await store.listUnindexedPromptVersions(workspaceId)) {
    const names = includesOf(version.prompt.string);
    await store.recordPromptVersionIncludes(workspaceId, version.prompt_id, version.version, names);
  }
}

/** The names a use of the partial may go by: its slug and id, and those of every partial including it
 * (in any version), through any number of partials. */
async function namesReaching(store: Store, partial: StoredPromptPartial): Promise<string[]> {
  const names = new Set([partial.slug, partial.id]);
  let added = [...names];
  while (added.length > 0) {
    const including = await store.listPromptPartialVersionsIncluding(partial.workspace_id, added);
    added = [];
    for (const version of including) {
      for (const name of [version.slug, version.partial_id]) {
        if (names.has(name)) continue;
        names.add(name);
        added.push(name);
      }
    }
  }
  return [...names];
}

/** Why a version's check fails, or undefined when it passes. */
async function failure(
  version: Parameters<typeof checkPromptDocument>[0],
  load: PartialLoader,
): Promise<string | undefined> {
  try {
    await checkPromptDocument(version, load);
    return undefined;
  } catch (err) {
    if (err instanceof GatewayError) return err.message;
    throw err;
  }
}

async function brokenPrompts(
  deps: GatewayDeps,
  partial: StoredPromptPartial,
  after: PartialAfter,
): Promise<Broken[]> {
  const { store } = deps;
  const workspaceId = partial.workspace_id;
  await recordMissingIncludes(store, workspaceId);
  const load = partialLoader(deps.lookups, workspaceId);
  const changed: PartialLoader = async (reference) => {
    const { name, selector } = parsePromptReference(reference, 'partial');
    if (name !== partial.slug && name !== partial.id) return load(reference);
    const loaded = after(selector);
    return loaded === 'unchanged' ? load(reference) : loaded;
  };
  const broken = new Map<string, Broken>();
  const candidates = await store.listPromptVersionsIncluding(
    workspaceId,
    await namesReaching(store, partial),
  );
  for (const version of candidates) {
    const reason = await failure(version.prompt, changed);
    // Already failing: the change does not break it.
    if (reason === undefined || (await failure(version.prompt, load)) !== undefined) continue;
    const entry = broken.get(version.prompt_id);
    if (entry) entry.versions.push(version.version);
    else broken.set(version.prompt_id, { slug: version.slug, versions: [version.version], reason });
  }
  return [...broken.values()];
}

/** `"slug" (versions 1, 3)`. */
function named(prompt: Pick<Broken, 'slug' | 'versions'>): string {
  const versions = prompt.versions.join(', ');
  return `"${prompt.slug}" (version${prompt.versions.length > 1 ? 's' : ''} ${versions})`;
}

/** ` and 3 more` past the NAMED an error names; '' within them. */
export function andMore(count: number): string {
  return count > NAMED ? ` and ${count - NAMED} more` : '';
}

/** The first NAMED prompts with their versions (`"a" (version 1), "b" (versions 1, 3)`), the rest counted. */
export function listedPrompts(prompts: ReadonlyArray<Pick<Broken, 'slug' | 'versions'>>): string {
  return prompts.slice(0, NAMED).map(named).join(', ') + andMore(prompts.length);
}

/**
 * Refuses (409 `conflict`) a change to a partial that would make calls of prompts fail, naming them by
 * slug with the versions it breaks (at most NAMED prompts, the rest counted) and the first one's reason.
 * `force` makes the change anyway.
 */
export async function refuseBreakingPrompts(
  deps: GatewayDeps,
  partial: StoredPromptPartial,
  change: { action: string; after: PartialAfter; param: string },
): Promise<void> {
  const broken = await brokenPrompts(deps, partial, change.after);
  if (broken.length === 0) return;
  const [first] = broken;
  throw new GatewayError(
    'conflict',
    `${change.action} the partial "${partial.slug}" would make prompts that include it fail: ` +
      `${listedPrompts(broken)} ` +
      `(${first.slug}@${first.versions[0]}: ${first.reason}). ` +
      'Change them first, or send ?force=true to make the change anyway (the versions named then fail ' +
      'when called)',
    { param: change.param },
  );
}
