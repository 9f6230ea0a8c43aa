/**
 * The prompts a change to a partial would break: deleting it, or publishing a version that no longer fits
 * where they include it (a quote closing their JSON string, a partial it names that does not exist …).
 * Each prompt's published and latest versions — those a call without a version number runs — are checked
 * as they are checked when stored, with the partial as it would be after the change; a prompt counts only
 * when it includes the partial (directly or through other partials) and the check fails.
 */
import { GatewayError } from '../../core/errors.js';
import type { StoredPromptPartial } from '../../store/types.js';
import type { GatewayDeps } from '../deps.js';
import { partialLoader } from './prompt-call.js';
import { parsePromptReference, type VersionSelector } from './prompt-reference.js';
import { checkPromptDocument, type LoadedPartial, type PartialLoader } from './render-prompt.js';

/** How many prompts an error names; the rest are counted. */
const NAMED = 10;

/** What the partial is after the change, for a use of it with this selector: `undefined` when deleted,
 * 'unchanged' when the change does not reach that use. */
export type PartialAfter = (selector: VersionSelector) => LoadedPartial | undefined | 'unchanged';

interface Broken {
  slug: string;
  reason: string;
}

async function brokenPrompts(
  deps: GatewayDeps,
  partial: StoredPromptPartial,
  after: PartialAfter,
): Promise<Broken[]> {
  const workspaceId = partial.workspace_id;
  const load = partialLoader(deps.lookups, workspaceId);
  const broken: Broken[] = [];
  for (const prompt of await deps.store.listPrompts(workspaceId)) {
    const versions = [{ prompt: prompt.prompt }];
    if (prompt.published_version !== prompt.version) {
      const published = await deps.store.getPromptVersion(workspaceId, prompt.id, prompt.published_version);
      if (published) versions.push(published);
    }
    for (const version of versions) {
      let includes = false;
      const loader: PartialLoader = async (reference) => {
        const { name, selector } = parsePromptReference(reference, 'partial');
        if (name !== partial.slug && name !== partial.id) return load(reference);
        const changed = after(selector);
        if (changed === 'unchanged') return load(reference);
        includes = true;
        return changed;
      };
      try {
        await checkPromptDocument(version.prompt, loader);
      } catch (err) {
        if (!includes || !(err instanceof GatewayError)) continue;
        broken.push({ slug: prompt.slug, reason: err.message });
        break;
      }
    }
  }
  return broken;
}

/**
 * Refuses (409 `conflict`) a change to a partial that would make prompts fail at call time, naming them by
 * slug (at most NAMED, the rest counted) and the first one's reason. `force` makes the change anyway.
 */
export async function refuseBreakingPrompts(
  deps: GatewayDeps,
  partial: StoredPromptPartial,
  change: { action: string; after: PartialAfter; param: string },
): Promise<void> {
  const broken = await brokenPrompts(deps, partial, change.after);
  if (broken.length === 0) return;
  const named = broken.slice(0, NAMED).map((b) => `"${b.slug}"`);
  const more = broken.length > NAMED ? ` and ${broken.length - NAMED} more` : '';
  throw new GatewayError(
    'conflict',
    `${change.action} the partial "${partial.slug}" would make prompts that include it fail: ` +
      `${named.join(', ')}${more} (${broken[0].slug}: ${broken[0].reason}). ` +
      'Change them first, or send ?force=true',
    { param: change.param },
  );
}
