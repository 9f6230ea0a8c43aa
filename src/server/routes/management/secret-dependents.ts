/**
 * Secrets held outside the stored document that sends them: a prompt version's parameters
 * (`parameters.user_api_key`, a header of `parameters.extra_headers`) go with every call to wherever the
 * stored config, virtual key or catalog provider it names sends its calls, and to the stored guardrails
 * those calls pass through (a webhook is sent the request body); a stored config's own settings (its
 * `override_params`, the keys of the nodes above a target) go with the calls of the target naming a virtual
 * key or catalog provider, and its `override_params` to the guardrails it lists. Changing where that thing
 * sends them (a config's or a guardrail's destinations, a credential's provider or host), or creating one
 * under a name they already use, would send those secrets elsewhere: the management API refuses it (409
 * `conflict`, naming them in its message and in `dependents`) unless `?force=true`.
 *
 * What names the thing is found as for a delete (destination-dependents.ts: the store's `references` of
 * each version); `store` is the transaction that then makes the change, holding the workspace's
 * references.
 */
import {
  anyUse,
  credentialKey,
  guardrailItem,
  promptNode,
  recordMissingReferences,
  referencesTo,
} from '../../../gateway/prompts/destination-dependents.js';
import {
  DependentsConflictError,
  listedUses,
  type NamingConfig,
  type NamingPrompt,
  type Uses,
} from '../../../gateway/prompts/dependents-conflict.js';
import { versionDestination } from '../../../gateway/prompts/prompt-call.js';
import { storedPromptVersion } from '../../../gateway/prompts/prompt-reference.js';
import type { TargetConfig } from '../../../gateway/config/index.js';
import { childPath, configParam, inheritFrom } from '../../../gateway/routing/inherit.js';
import { REDACTED } from '../../../observability/redact.js';
import type { PromptDocument, Repositories } from '../../../store/types.js';
import { misshapenHeaders, misshapenHeadersHold } from './extra-headers.js';
import { isSecretSetting } from './views.js';
import { isObject, type Json } from './json.js';
import { sameDestinations } from './redacted-values.js';

/** A stored config, virtual key, catalog provider or guardrail, by every name it is known by (slug, id). */
export interface Carrier {
  kind: 'config' | 'virtual_key' | 'provider' | 'guardrail';
  names: ReadonlySet<string>;
}

/** Whether `value` holds a credential anywhere: a value under a key isSecretSetting names, or
 * `extra_headers` given as text or an array (stored before they had to be an object: extra-headers.ts),
 * whose names are no keys to tell by. */
export function holdsSecret(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsSecret);
  if (!isObject(value)) return false;
  return Object.entries(value).some(([key, inner]) => {
    if (key === 'extra_headers' && misshapenHeaders(inner)) return misshapenHeadersHold(inner);
    return isSecretSetting(key) && typeof inner === 'string'
      ? inner !== '' && inner !== REDACTED
      : holdsSecret(inner);
  });
}

/** The key of a config node (or of a prompt version read as one) naming the carrier; undefined when none
 * does. A stored config is named by a prompt version's `config` alone (sendsSecretsThrough). */
function namingKey(node: Json, carrier: Carrier): string | undefined {
  if (carrier.kind === 'config') return undefined;
  if (carrier.kind === 'guardrail') return guardrailItem(node, carrier.names);
  return credentialKey(node, carrier.kind, carrier.names);
}

/** The parameters of the prompt version each `prompt_id` of a config selects, by the reference as written
 * (`support@2`): what a call sends as the target's `override_params` (prompts/prompt-targets.ts). */
type PromptParameters = ReadonlyMap<string, unknown>;

/** Adds to `found` the parameters of the versions the `prompt_id` references of `config`'s nodes select, as
 * the store holds them now; none for a reference naming no version. */
async function readPromptParameters(
  store: Repositories,
  workspaceId: string,
  config: unknown,
  found: Map<string, unknown>,
): Promise<void> {
  if (!isObject(config)) return;
  const reference = config.prompt_id;
  if (typeof reference === 'string' && !found.has(reference)) {
    const selected = await storedPromptVersion(store, workspaceId, reference);
    found.set(reference, selected?.version.prompt.parameters);
  }
  if (!Array.isArray(config.targets)) return;
  for (const target of config.targets) await readPromptParameters(store, workspaceId, target, found);
}

/**
 * What of a target's settings (as it resolves them, inherit.ts) goes where the carrier sends its calls:
 * for a guardrail, the request body it is sent (`override_params`); for a virtual key or catalog provider,
 * every setting. A target naming a prompt (`prompt_id`, its own or passed down) sends that prompt's
 * parameters as its `override_params` too, secrets and all.
 */
function carried(target: Json, carrier: Carrier, prompts: PromptParameters): unknown {
  const { targets: _targets, ...own } = target;
  const fromPrompt = typeof target.prompt_id === 'string' ? prompts.get(target.prompt_id) : undefined;
  return [carrier.kind === 'guardrail' ? target.override_params : own, fromPrompt];
}

/** A target of a config (a node with no targets below it) as a call resolves it: the settings passed down
 * to it from the nodes above (inheritFrom, as routing does: provider identity only to a node naming no
 * provider or virtual key of its own), with the nodes from the root down to it, each at its path. */
interface ResolvedTarget {
  resolved: Json;
  chain: { node: Json; path: string }[];
}

function* resolvedTargets(
  node: unknown,
  parent?: Json,
  chain: ResolvedTarget['chain'] = [],
  path = '',
): Generator<ResolvedTarget> {
  if (!isObject(node)) return;
  const resolved =
    parent === undefined ? node : (inheritFrom(parent as TargetConfig, node as TargetConfig) as Json);
  const here = [...chain, { node, path }];
  const targets = Array.isArray(node.targets) ? node.targets : [];
  if (targets.length === 0) {
    yield { resolved, chain: here };
    return;
  }
  for (const [i, target] of targets.entries())
    yield* resolvedTargets(target, resolved, here, childPath(path, i));
}

/**
 * Where a node of `config` names the carrier that a target sends its calls to while secrets go with them:
 * its own (as resolved), or those held above (`above`: by the prompt version sending its calls through
 * this config). The place is that of the lowest node above the target (or the target) naming it itself.
 * Undefined when none does.
 */
function secretNamingNode(
  config: unknown,
  carrier: Carrier,
  prompts: PromptParameters,
  above: boolean,
): string | undefined {
  for (const { resolved, chain } of resolvedTargets(config)) {
    const key = namingKey(resolved, carrier);
    if (key === undefined || !(above || holdsSecret(carried(resolved, carrier, prompts)))) continue;
    for (const { node, path } of [...chain].reverse()) {
      const own = namingKey(node, carrier);
      if (own !== undefined) return configParam(path, own);
    }
    return configParam(chain[chain.length - 1]!.path, key);
  }
  return undefined;
}

/** Whether a target of `config` sends its calls to the carrier, secrets or none. */
function namesCarrier(config: unknown, carrier: Carrier): boolean {
  for (const { resolved } of resolvedTargets(config))
    if (namingKey(resolved, carrier) !== undefined) return true;
  return false;
}

/**
 * Whether a prompt version sends secrets of its own through the carrier: its parameters hold one and its
 * destination is the carrier (a stored config among `configs`: the carrier, or a config naming it,
 * archived or not; or, naming none, the catalog provider its model names), or its inline config names it with secrets
 * going there.
 */
function sendsSecretsThrough(
  document: PromptDocument,
  carrier: Carrier,
  configs: ReadonlySet<string>,
  prompts: PromptParameters,
): boolean {
  const { config: _config, ...outside } = document;
  const own = holdsSecret(outside);
  const to = versionDestination(document);
  if (to !== undefined && 'stored' in to) return own && configs.has(to.stored);
  if (to !== undefined && 'inline' in to)
    return secretNamingNode(to.inline, carrier, prompts, own) !== undefined;
  // Its virtual key or provider, or, naming none, the catalog provider its model names.
  return own && namingKey(promptNode(document), carrier) !== undefined;
}

/**
 * What sends secrets of its own through the carrier: the stored configs (archived ones too: making one
 * active again checks only that what it names exists) with a node naming it while
 * secrets go with that node's calls (their own, or a prompt's their `prompt_id` targets send), each with
 * where; and the versions of live prompts sending secrets through it, directly, through an inline config,
 * or through a stored config naming it.
 */
export async function secretHolders(
  store: Repositories,
  workspaceId: string,
  carrier: Carrier,
): Promise<Uses> {
  await recordMissingReferences(store, workspaceId);
  const configs: NamingConfig[] = [];
  const parameters = new Map<string, unknown>();
  // The stored configs a prompt version may name to send its calls through the carrier.
  const through = new Set(carrier.kind === 'config' ? carrier.names : []);
  if (carrier.kind !== 'config') {
    for (const config of await store.listConfigsReferencing(
      workspaceId,
      referencesTo(carrier.kind, carrier.names),
    )) {
      // An archived one counts as an active one: made active again, it sends them there without a check
      // of where that is now.
      if (!namesCarrier(config.config, carrier)) continue;
      through.add(config.slug).add(config.id);
      await readPromptParameters(store, workspaceId, config.config, parameters);
      const param = secretNamingNode(config.config, carrier, parameters, false);
      if (param !== undefined) configs.push({ slug: config.slug, param });
    }
  }
  const references = [...referencesTo(carrier.kind, carrier.names), ...referencesTo('config', through)];
  const found = new Map<string, NamingPrompt>();
  for (const version of await store.listPromptVersionsReferencing(workspaceId, references)) {
    await readPromptParameters(store, workspaceId, version.prompt.config, parameters);
    if (!sendsSecretsThrough(version.prompt, carrier, through, parameters)) continue;
    const prompt = found.get(version.prompt_id) ?? { slug: version.slug, versions: [] };
    if (!prompt.versions.includes(version.version)) prompt.versions.push(version.version);
    found.set(version.prompt_id, prompt);
  }
  const prompts = [...found.values()].map((prompt) => ({
    ...prompt,
    versions: prompt.versions.sort((a, b) => a - b),
  }));
  return { configs, prompts, guardrails: [] };
}

/**
 * Refuses (409 `conflict`, `param` the field making the change) a change sending the calls through the
 * carrier elsewhere (`doing`: `Changing where the config "q-cfg" sends its calls`) while something holds
 * secrets that go with them (secretHolders), naming it.
 */
export async function refuseSendingSecretsElsewhere(
  store: Repositories,
  workspaceId: string,
  carrier: Carrier,
  change: { doing: string; param: string },
): Promise<void> {
  const uses = await secretHolders(store, workspaceId, carrier);
  if (!anyUse(uses)) return;
  throw new DependentsConflictError(
    `${change.doing} would send there too the secrets held outside it by what sends its calls through it ` +
      `(prompts' parameters or headers, configs' override_params or keys): ${listedUses(uses)}. ` +
      'Send those elsewhere first, or send ?force=true to make the change anyway (their secrets then go ' +
      'to the new destinations)',
    uses,
    change.param,
  );
}

/**
 * Refuses (409 `conflict`, `param` slug) creating a stored config, virtual key, catalog provider or
 * guardrail under `slug` while what still names it (one deleted with ?force=true, or a live one whose id it
 * is: a lookup by name matches ids too) holds secrets that would go to the new one's destinations. A slug
 * a live one already has is the store's refusal, not this; one equal to a live one's id is judged.
 */
export async function refuseCreatingUnderUsedName(
  store: Repositories,
  workspaceId: string,
  kind: Carrier['kind'],
  slug: string,
): Promise<void> {
  const live =
    kind === 'config'
      ? await store.getConfig(workspaceId, slug)
      : kind === 'guardrail'
        ? await store.getGuardrail(workspaceId, slug)
        : await store.getCredential(workspaceId, kind, slug);
  if (live?.slug === slug) return;
  const noun = { config: 'config', guardrail: 'guardrail', virtual_key: 'virtual key', provider: 'provider' };
  const shown = kind === 'provider' ? `@${slug}` : slug;
  await refuseSendingSecretsElsewhere(
    store,
    workspaceId,
    { kind, names: new Set([slug]) },
    { doing: `Creating the ${noun[kind]} "${shown}"`, param: 'slug' },
  );
}

/**
 * Refuses (as refuseSendingSecretsElsewhere) a new definition of a stored config or guardrail (`next`)
 * whose destinations (redacted-values.ts: destinationsOf, each at its place: a host swapped with a check's
 * URL is a move) are not those of the stored one, while something holds secrets that go with its calls.
 */
export async function refuseMovingSecrets(
  store: Repositories,
  workspaceId: string,
  carrier: Carrier,
  definitions: { next: unknown; stored: unknown },
  change: { doing: string; param: string },
): Promise<void> {
  if (sameDestinations(definitions.next, definitions.stored)) return;
  await refuseSendingSecretsElsewhere(store, workspaceId, carrier, change);
}
