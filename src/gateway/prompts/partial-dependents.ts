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
 *
 * A check renders templates, which is done before the change's transaction (reading the store, not this
 * node's cache, so that it sees what is committed): `writeIfUnchanged` then makes the change in a
 * transaction holding the workspace's references only if what the check read is still so there — the
 * workspace's partials as they were, and the same versions including the partial — and checks again
 * otherwise. A prompt version or a new partial stored at the same time does the same with the partials
 * it includes.
 */
import { GatewayError } from '../../core/errors.js';
import type { Repositories, Store, StoredPromptPartial } from '../../store/types.js';
import type { GatewayDeps } from '../deps.js';
import { DependentsConflictError, listedPrompts, type NamingPrompt } from './dependents-conflict.js';
import { partialLoader, storedPartials } from './prompt-call.js';
import { parsePromptReference, type VersionSelector } from './prompt-reference.js';
import { includedPartials } from './prompt-template.js';
import {
  checkPromptDocument,
  type LoadedPartial,
  type PartialLoader,
  type PromptVariables,
} from './render-prompt.js';

/** What the partial is after the change, for a use of it with this selector: `undefined` when deleted,
 * 'unchanged' when the change does not reach that use. */
export type PartialAfter = (selector: VersionSelector) => LoadedPartial | undefined | 'unchanged';

/** A prompt the change breaks: the versions, and why the first fails. */
export interface Broken extends NamingPrompt {
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

/** Records what the workspace's versions stored without their includes include. A change to a partial
 * does it first, on the store: its check would do it, and so change what the check read. */
export async function recordMissingIncludes(store: Store, workspaceId: string): Promise<void> {
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
async function namesReaching(
  store: Pick<Repositories, 'listPromptPartialVersionsIncluding'>,
  partial: Pick<StoredPromptPartial, 'workspace_id' | 'slug' | 'id'>,
): Promise<string[]> {
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

/** The variables a version requires and reads, or why its check fails. */
async function checked(
  version: Parameters<typeof checkPromptDocument>[0],
  load: PartialLoader,
): Promise<PromptVariables | { reason: string }> {
  try {
    return await checkPromptDocument(version, load);
  } catch (err) {
    if (err instanceof GatewayError) return { reason: err.message };
    throw err;
  }
}

const quoted = (names: string[]) => names.map((name) => `"${name}"`).join(', ');

/**
 * Why calls that a version takes with its variables as they are would be refused with them as they would
 * be, or undefined when none would: variables are strict, so one it would require that it does not (a call
 * may leave it out) and one it would no longer read (a call may send it) each break its calls. One it
 * would read without requiring it, or no longer require but still read, breaks none.
 */
export function variablesChange(before: PromptVariables, after: PromptVariables): string | undefined {
  const required = [...after.required].filter((name) => !before.required.has(name));
  const unread = [...before.known].filter((name) => !after.known.has(name));
  const why = [
    ...(required.length > 0 ? [`it would require ${quoted(required)}, which its calls may leave out`] : []),
    ...(unread.length > 0 ? [`it would no longer read ${quoted(unread)}, which its calls may send`] : []),
  ];
  return why.length === 0 ? undefined : `${why.join('; ')} (variables are strict)`;
}

async function brokenPrompts(
  deps: GatewayDeps,
  partial: StoredPromptPartial,
  after: PartialAfter,
): Promise<Broken[]> {
  const { store } = deps;
  const workspaceId = partial.workspace_id;
  await recordMissingIncludes(store, workspaceId);
  const load = partialLoader(storedPartials(store), workspaceId);
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
    const before = await checked(version.prompt, load);
    // Already failing: the change does not break it.
    if ('reason' in before) continue;
    const after = await checked(version.prompt, changed);
    const reason = 'reason' in after ? after.reason : variablesChange(before, after);
    if (reason === undefined) continue;
    const entry = broken.get(version.prompt_id);
    if (entry) entry.versions.push(version.version);
    else broken.set(version.prompt_id, { slug: version.slug, versions: [version.version], reason });
  }
  return [...broken.values()];
}

/**
 * Refuses (409 `conflict`) a change to a partial that would make calls of prompts fail, naming them by
 * slug with the versions it breaks (at most NAMED prompts, the rest counted) and the first one's reason
 * (each one's in `dependents`).
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
  throw new DependentsConflictError(
    `${change.action} the partial "${partial.slug}" would make prompts that include it fail: ` +
      `${listedPrompts(broken)} ` +
      `(${first.slug}@${first.versions[0]}: ${first.reason}). ` +
      'Change them first, or send ?force=true to make the change anyway (the versions named then fail ' +
      'when called)',
    { configs: [], prompts: broken, guardrails: [] },
    change.param,
  );
}

/**
 * What a check against the workspace's partials read, as a value to compare: each partial's latest and
 * published version (a deleted one gone, a new one there), and, for a change to `partial`, the prompt
 * versions including it (through the names reaching it: 0025's record). Read again in the change's
 * transaction, the same value means the check still holds.
 */
export async function partialsState(
  store: Pick<
    Repositories,
    'listPromptPartials' | 'listPromptPartialVersionsIncluding' | 'listPromptVersionsIncluding'
  >,
  workspaceId: string,
  partial?: Pick<StoredPromptPartial, 'workspace_id' | 'slug' | 'id'>,
): Promise<string> {
  const partials = (await store.listPromptPartials(workspaceId))
    .map((p) => `${p.id}:${p.version}:${p.published_version}`)
    .sort();
  if (!partial) return JSON.stringify(partials);
  const names = await namesReaching(store, partial);
  const including = (await store.listPromptVersionsIncluding(workspaceId, names))
    .map((version) => `${version.prompt_id}@${version.version}`)
    .sort();
  return JSON.stringify([partials, including]);
}

/** How many times a change is checked again when what its check read changed before its transaction. */
const CHECK_ATTEMPTS = 3;

/**
 * Checks (`check`, on the store, outside any transaction: rendering reads partials, which a transaction
 * on SQLite would wait for), then writes (`write`) in a transaction holding the workspace's references,
 * if `state` reads there what it read before the check; else checks again, at most CHECK_ATTEMPTS times,
 * then refuses (409 `conflict`, `param`): the workspace's prompts and partials kept changing meanwhile.
 */
export async function writeIfUnchanged<C, T>(
  store: Store,
  workspaceId: string,
  state: (from: Repositories) => Promise<string>,
  check: () => Promise<C>,
  write: (tx: Repositories, checked: C) => Promise<T>,
  param: string,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const before = await state(store);
    const checked = await check();
    const done = await store.transaction(async (tx) => {
      await tx.holdReferences(workspaceId);
      if ((await state(tx)) !== before) return undefined;
      return { value: await write(tx, checked) };
    });
    if (done) return done.value;
    if (attempt === CHECK_ATTEMPTS) {
      throw new GatewayError(
        'conflict',
        "The workspace's prompt partials, or the prompts including them, changed while this change was " +
          'checked, each time it was checked: send it again',
        { param },
      );
    }
  }
}
