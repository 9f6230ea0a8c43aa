/**
 * What a change of which version of a prompt its references select would break at a host: a `prompt_id`
 * target naming no provider or virtual key of its own is sent to its prompt's destination with its own
 * settings over the destination's (prompt-targets.ts), and when its calls go with a stored credential
 * holding a secret (the one the destination names at its root, or the target's parent's for one naming
 * none), a host setting of the target's own that is not the stored one makes each of its calls
 * a 400 `custom_host_refused` (credential-host.ts). A config is refused when it is stored so
 * (named-documents.ts); publishing a version, or storing one as the prompt's latest, can send the prompt's
 * calls to such a credential afterwards, for the targets whose reference selects that version (`slug`, or
 * `slug@latest`; `slug@3` stays where it is). The management API refuses that change (409 `conflict`,
 * naming the active configs with their target's setting, in its message and in `dependents`:
 * dependents-conflict.ts) unless `?force=true`, as it refuses deleting the prompt
 * (destination-dependents.ts).
 *
 * A target counts when the version it selects after the change refuses its host and the one it selects
 * now does not: one failing already is not broken by the change. The configs are found through what the
 * store records of their versions (`references`), and judged by the check a config is stored by
 * (callsRefusedByVersion), never a copy of it.
 *
 * A change of the active stored config versions send their calls to (a new `config`) moves them the same
 * way, for the targets whose reference selects such a version: refused the same way
 * (refuseBreakingDestinationChange), judged before and after the change is written.
 *
 * A version that sets no `parameters.metadata` of its own, where the one selected now set one, lets a
 * parent's `override_params.metadata` reach the target's chat calls: one over OpenAI's limits, stored because
 * the version's replaced it (override-metadata.ts), then refuses each. Such a change is refused the same
 * way, judged by the check a config is stored by (brokenMetadata).
 *
 * So is a change after which the Vertex AI settings such a target's calls meet (its own over the
 * destination's, or its parent's, each over the credential's) are ones Vertex does not serve together
 * (`cloudb_shared_request_type` beyond the global endpoint, or beside `dedicated`): the same check a config
 * is stored by judges both (callsRefusedByVersion), for a prompt change and for a change of the config its
 * versions send their calls to.
 *
 * `store` is the transaction that then makes the change, holding the workspace's references
 * (holdReferences): a config stored meanwhile is judged against the version it then selects.
 */
import type { PromptDocument, Repositories, StoredConfig, StoredPrompt } from '../../store/types.js';
import type { GatewayConfig } from '../config/index.js';
import { overrideMetadataRefusal } from '../config/override-metadata.js';
import { callsRefusedByVersion, promptTargetReference } from '../named-documents.js';
import { configParam } from '../routing/inherit.js';
import { leafTargets } from '../routing/leaf-targets.js';
import {
  DependentsConflictError,
  listedConfigsWithReasons,
  type NamingConfig,
} from './dependents-conflict.js';
import { recordMissingReferences, referencesTo } from './destination-dependents.js';
import { versionDestination } from './prompt-call.js';
import { selectedVersion } from './prompt-reference.js';

/** A change of the version a selector picks on the prompt. */
export interface PromptSelectionChange {
  /** The prompt as it is, read in the change's transaction. */
  prompt: StoredPrompt;
  /** The references whose selection moves: the published version's, or `@latest`'s. */
  selector: 'published' | 'latest';
  /** The version they select after the change. */
  next: { number: number; document: PromptDocument };
  /** As the message begins: `Publishing version 3 of`. */
  action: string;
  /** The body's key the 409 names. */
  param: string;
}

/** The store as the change leaves the prompt: its `selector` picks the changed version. */
function changedPromptStore(
  store: Repositories,
  change: PromptSelectionChange,
): Pick<Repositories, 'getPrompt' | 'getPromptVersion'> {
  const { prompt, selector, next } = change;
  const changed: StoredPrompt = {
    ...prompt,
    ...(selector === 'published' ? { published_version: next.number } : { version: next.number }),
  };
  return {
    getPrompt: async (workspaceId, slugOrId) => {
      const found = await store.getPrompt(workspaceId, slugOrId);
      return found?.id === prompt.id ? changed : found;
    },
    getPromptVersion: async (workspaceId, promptId, number) =>
      promptId === prompt.id && number === next.number
        ? { prompt_id: prompt.id, version: next.number, prompt: next.document, created_at: 0 }
        : store.getPromptVersion(workspaceId, promptId, number),
  };
}

/** What refuses a target's calls after the change: a host of its own, Vertex AI settings it meets that
 * Vertex would not serve together, or the metadata it takes. */
type Breaking = 'host' | 'capacity' | 'metadata';

/** A config's target refused by the change: its setting (`config.targets[0].custom_host`), why, and
 * what refuses it. */
type BrokenTarget = Omit<NamingConfig, 'slug'> & { kind: Breaking };

/** The targets of a stored config whose calls the change would have refused at the stored credential they
 * go with (callsRefusedByVersion): each one's setting, why, and what refuses it. */
async function brokenTargets(
  store: Repositories,
  change: PromptSelectionChange,
  config: GatewayConfig,
): Promise<BrokenTarget[]> {
  const { prompt, selector, next } = change;
  const workspaceId = prompt.workspace_id;
  const names = new Set([prompt.slug, prompt.id]);
  const selected = selectedVersion(prompt, selector);
  const current = await store.getPromptVersion(workspaceId, prompt.id, selected);
  const broken: BrokenTarget[] = [];
  for (const leaf of leafTargets(config)) {
    // A stored config is parsed when it is stored: its nodes are configs'.
    const node = leaf.own as GatewayConfig;
    const reference = promptTargetReference(node, leaf.node as GatewayConfig);
    if (reference === undefined || !names.has(reference.name) || reference.selector !== selector) continue;
    const after = await callsRefusedByVersion(store, workspaceId, leaf, { name: reference.name, ...next });
    if (after.length === 0) continue;
    // One refused already is not broken by the change.
    const before =
      current &&
      (await callsRefusedByVersion(store, workspaceId, leaf, {
        name: reference.name,
        number: selected,
        document: current.prompt,
      }));
    if (before && before.length > 0) continue;
    for (const { setting, message, kind } of after)
      broken.push({ param: configParam(leaf.path, setting), reason: message, kind });
  }
  return broken;
}

/**
 * Where a stored config's `override_params.metadata` over OpenAI's limits would reach its chat calls once
 * the change is made, refused by the check a config is stored by (override-metadata.ts): the change's
 * version no longer sets its own `parameters.metadata`, which replaced it. One refused already is not
 * broken by the change.
 */
async function brokenMetadata(
  store: Repositories,
  change: PromptSelectionChange,
  config: GatewayConfig,
): Promise<Omit<NamingConfig, 'slug'> | undefined> {
  const workspaceId = change.prompt.workspace_id;
  const after = await overrideMetadataRefusal(config, {
    store: changedPromptStore(store, change),
    workspaceId,
  });
  if (after === undefined || (await overrideMetadataRefusal(config, { store, workspaceId })))
    return undefined;
  const reason =
    `version ${change.next.number} of the prompt "${change.prompt.slug}" sets no parameters.metadata of ` +
    `its own to replace it: ${after.message}`;
  return { param: after.param ?? 'config', reason };
}

/** As a 409's message says what the change would refuse each target's calls for. */
const BREAKING: Record<Breaking, string> = {
  host: 'to a stored credential beside a host of their own',
  capacity: 'to a Vertex AI credential whose settings, with their own, Vertex AI would not serve',
  metadata: "with an override_params.metadata over OpenAI's limits, which the prompt's version replaced",
};

/** The kinds of refusal a 409 says the change would bring, in the words of its message. */
function breakingWords(kinds: ReadonlySet<Breaking>): string {
  const words = (Object.keys(BREAKING) as Breaking[])
    .filter((kind) => kinds.has(kind))
    .map((k) => BREAKING[k]);
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} and ${words.at(-1)!}` : words.join('');
}

/**
 * Refuses (409 `conflict`, `change.param`) a change of the version `change.selector` picks on a prompt when
 * targets of active stored configs selecting it that way would then have each call refused — at their
 * host, or for the metadata they take —, naming every refusal: the config by slug with where it is met
 * (`"support" (config.targets[0].custom_host)`) and why, a config refused for several reasons (or at
 * several targets) once for each (at most NAMED, the rest counted), in the message and in `dependents`.
 */
export async function refuseBreakingPromptTargets(
  store: Repositories,
  change: PromptSelectionChange,
): Promise<void> {
  const { prompt } = change;
  const workspaceId = prompt.workspace_id;
  await recordMissingReferences(store, workspaceId);
  const references = referencesTo('prompt', new Set([prompt.slug, prompt.id]));
  const broken: NamingConfig[] = [];
  const breaking = new Set<Breaking>();
  for (const config of await store.listConfigsReferencing(workspaceId, references)) {
    if (config.status !== 'active') continue;
    const stored = config.config as GatewayConfig;
    for (const { kind, ...target } of await brokenTargets(store, change, stored)) {
      broken.push({ slug: config.slug, ...target });
      breaking.add(kind);
    }
    const metadata = await brokenMetadata(store, change, stored);
    if (metadata === undefined) continue;
    broken.push({ slug: config.slug, ...metadata });
    breaking.add('metadata');
  }
  if (broken.length === 0) return;
  throw new DependentsConflictError(
    `${change.action} the prompt "${prompt.slug}" would send the calls of configs whose targets name it ` +
      `${breakingWords(breaking)}, refusing each: ${listedConfigsWithReasons(broken)}. ` +
      'Change them first, or send ?force=true to make the change anyway (calls through them then fail)',
    { configs: broken, prompts: [], guardrails: [] },
    change.param,
  );
}

/**
 * The targets of active stored configs (but the destination's own) whose calls go, through the prompt
 * their reference names, to the stored config `destination` (the version it selects sends its calls
 * there), and are refused at the stored credential they go with as it is stored now
 * (callsRefusedByVersion): by config and target, each refusal of a target.
 */
async function refusedThrough(
  store: Repositories,
  destination: StoredConfig,
): Promise<Map<string, Array<BrokenTarget & { slug: string }>>> {
  const workspaceId = destination.workspace_id;
  const names = new Set([destination.slug, destination.id]);
  // The versions sending their calls to it, by prompt and number.
  const sending = new Map<string, Map<number, PromptDocument>>();
  for (const version of await store.listPromptVersionsReferencing(
    workspaceId,
    referencesTo('config', names),
  )) {
    const to = versionDestination(version.prompt);
    if (to === undefined || !('stored' in to) || !names.has(to.stored)) continue;
    const versions = sending.get(version.prompt_id) ?? new Map<number, PromptDocument>();
    sending.set(version.prompt_id, versions.set(version.version, version.prompt));
  }
  const refused = new Map<string, Array<BrokenTarget & { slug: string }>>();
  for (const [promptId, versions] of sending) {
    const prompt = await store.getPrompt(workspaceId, promptId);
    if (!prompt) continue;
    const promptNames = new Set([prompt.slug, prompt.id]);
    for (const config of await store.listConfigsReferencing(
      workspaceId,
      referencesTo('prompt', promptNames),
    )) {
      if (config.status !== 'active' || config.id === destination.id) continue;
      for (const leaf of leafTargets(config.config)) {
        const node = leaf.own as GatewayConfig;
        const reference = promptTargetReference(node, leaf.node as GatewayConfig);
        if (reference === undefined || !promptNames.has(reference.name)) continue;
        const number = selectedVersion(prompt, reference.selector);
        const document = versions.get(number);
        if (document === undefined) continue;
        const calls = await callsRefusedByVersion(store, workspaceId, leaf, {
          name: reference.name,
          number,
          document,
        });
        if (calls.length === 0) continue;
        // By target: one refused already, for whatever reason, is not broken by the change.
        refused.set(
          `${config.id}\u0000${leaf.path}`,
          calls.map(({ setting, message, kind }) => ({
            slug: config.slug,
            param: configParam(leaf.path, setting),
            reason: message,
            kind,
          })),
        );
      }
    }
  }
  return refused;
}

/**
 * Makes a change of a stored config (`change`, in the transaction `store` holding the workspace's
 * references) and refuses it (409 `conflict`, `param`), which rolls it back, when it sends the calls of
 * `prompt_id` targets of active stored configs, through the prompts whose versions send theirs to it, to
 * a stored credential beside a host of their own: judged before and after the change, as the config is
 * stored, one refused already not counted. Named as a prompt change names them, each with its reason.
 */
export async function refuseBreakingDestinationChange<T>(
  store: Repositories,
  destination: StoredConfig,
  param: string,
  change: () => Promise<T>,
): Promise<T> {
  const before = await refusedThrough(store, destination);
  const changed = await change();
  const after = await refusedThrough(store, destination);
  const broken = [...after].filter(([key]) => !before.has(key)).flatMap(([, targets]) => targets);
  if (broken.length === 0) return changed;
  const breaking = new Set(broken.map(({ kind }) => kind));
  throw new DependentsConflictError(
    `Changing the config "${destination.slug}" would send the calls of configs whose targets name prompts ` +
      `sending theirs to it ${breakingWords(breaking)}, refusing each: ` +
      `${listedConfigsWithReasons(broken)}. ` +
      'Change them first, or send ?force=true to make the change anyway (calls through them then fail)',
    { configs: broken.map(({ kind: _kind, ...config }) => config), prompts: [], guardrails: [] },
    param,
  );
}
