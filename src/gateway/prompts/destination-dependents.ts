/**
 * What deleting a stored config, prompt, credential or guardrail would break (or giving a credential
 * another provider), these naming each other: a
 * prompt version sends its calls to a stored config (`config: "<slug or id>"`) or a virtual key
 * (`virtual_key`, `provider: "@slug"`, or, naming no destination, `parameters.model: "@slug/model"`), and a stored config's target names a prompt (`"prompt_id":
 * "slug@3"`) or a virtual key; a config's node (a stored config's, or a prompt version's inline config's)
 * lists stored guardrails (`"input_guardrails": ["<slug or id>"]`), and asks through a stored config or
 * a virtual key for its semantic cache's embeddings (`cache.embedding`) or a model-judged check's verdict
 * (`default.modelJudge`, which a stored guardrail may hold too). After the delete those calls fail (404,
 * or 400 for a guardrail; a judge's failure errs to the check's `on_error`, pass by default), as they do
 * once a config is archived, so the management API refuses either (409 `conflict`, naming them in its
 * message and in `dependents`: dependents-conflict.ts) unless
 * `?force=true`, as it does for a partial (partial-dependents.ts).
 *
 * Every version of a live prompt counts, not only its published and latest ones: any may be called
 * (`slug@3`). A config counts by its current version while it is active: that is what a call resolves,
 * and an archived config's calls fail already (as a revoked credential's do). Both are found through
 * what the store records of each version (`references`, 0026_document_references: the names it uses for
 * what it names; 0027 has them read again for the cache's and the judges' names), never by reading every
 * config and prompt of the workspace; those found are read to tell where they name it. A stored guardrail
 * counts by its current version, found the same way (0028_guardrail_version_references: what its judges
 * ask through).
 *
 * `store` is the transaction that then makes the change, holding the workspace's references
 * (holdReferences): what the check finds is what the change is committed against, since a write naming
 * the thing waits for it, and checks again that the thing is there.
 */
import type {
  PromptDocument,
  ProviderCredential,
  Repositories,
  StoredConfig,
  StoredGuardrail,
  StoredPrompt,
} from '../../store/types.js';
import type { GatewayConfig } from '../config/config-schema.js';
import { checksNotRunningOn } from '../config/guardrail-definition.js';
import { keyAsWritten, withModelProvider } from '../config/model-provider.js';
import {
  GUARDRAIL_LISTS,
  guardrailJudges,
  isRecord,
  JUDGE_KEYS,
  nodeJudges,
} from '../config/model-judges.js';
import { childPath, configParam } from '../routing/inherit.js';
import {
  DependentsConflictError,
  listedConfigs,
  listedUses,
  type NamingConfig,
  type NamingPrompt,
  type Uses,
} from './dependents-conflict.js';
import { referenceName } from './prompt-reference.js';

/** A node of a stored config and its path (`targets[1].targets[0]`, '' for the top), depth first. */
function* configNodes(node: unknown, path = ''): Generator<{ node: Record<string, unknown>; path: string }> {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return;
  const record = node as Record<string, unknown>;
  yield { node: record, path };
  if (!Array.isArray(record.targets)) return;
  for (const [i, child] of record.targets.entries()) yield* configNodes(child, childPath(path, i));
}

/** The stored config (`config`) or virtual key (`virtual_key`) a node's semantic cache embeds through. */
function cacheEmbedding(node: Record<string, unknown>): Record<string, unknown> | undefined {
  const embedding = isRecord(node.cache) ? node.cache.embedding : undefined;
  return isRecord(embedding) ? embedding : undefined;
}

/** What the judges of `judges` name, as the store indexes it: `config:<name>`, `virtual_key:<name>`. */
function judgeReferences(judges: Iterable<{ parameters: Record<string, unknown> }>): string[] {
  const found: string[] = [];
  for (const { parameters } of judges) {
    for (const kind of Object.values(JUDGE_KEYS)) {
      if (typeof parameters[kind] === 'string') found.push(`${kind}:${parameters[kind]}`);
    }
  }
  return found;
}

/** The catalog provider a node names, as a call resolves it (withModelProvider): `provider: "@slug"`, or
 * `override_params.model: "@slug/model"` on a node naming no provider or virtual key of its own; with the
 * key naming it. Undefined when it names none. */
function catalogProvider(node: Record<string, unknown>): { slug: string; key: string } | undefined {
  const resolved = withModelProvider(node as GatewayConfig);
  const provider: unknown = resolved.provider;
  if (typeof provider !== 'string' || !provider.startsWith('@')) return undefined;
  return { slug: provider.slice(1), key: keyAsWritten(resolved, 'provider') };
}

/**
 * A prompt version read as a config node, whose destination keys (`virtual_key`, `provider`) are a node's:
 * a version naming no destination at all sends its calls where its model written `@<provider_slug>/<model>`
 * names (prompt completions resolve their config from the rendered model), so that model is the node's
 * `override_params.model`, which catalogProvider reads as a call does. A version naming a destination
 * sends the model there as written.
 */
export function promptNode(document: PromptDocument): Record<string, unknown> {
  const node = document as unknown as Record<string, unknown>;
  const model: unknown = document.parameters?.model;
  const namesDestination =
    document.config !== undefined || document.virtual_key !== undefined || document.provider !== undefined;
  if (namesDestination || typeof model !== 'string') return node;
  return { ...node, override_params: { model } };
}

/** What a config node names, as the store indexes it (`kind:name`): a prompt (`prompt_id`, its version
 * left out), a virtual key, a catalog provider (`@slug`, or its model's `@slug/`), the stored guardrails of its lists, the config
 * or virtual key its semantic cache embeds through (`cache.embedding`), and those its model-judged
 * checks ask their judge through. */
function nodeReferences(node: Record<string, unknown>): string[] {
  const found: string[] = [];
  if (typeof node.prompt_id === 'string') found.push(`prompt:${referenceName(node.prompt_id)}`);
  if (typeof node.virtual_key === 'string') found.push(`virtual_key:${node.virtual_key}`);
  const provider = catalogProvider(node);
  if (provider !== undefined) found.push(`provider:${provider.slug}`);
  for (const list of GUARDRAIL_LISTS) {
    const items = node[list];
    if (!Array.isArray(items)) continue;
    for (const item of items) if (typeof item === 'string') found.push(`guardrail:${item}`);
  }
  const embedding = cacheEmbedding(node);
  if (typeof embedding?.virtual_key === 'string') found.push(`virtual_key:${embedding.virtual_key}`);
  if (typeof embedding?.config === 'string') found.push(`config:${embedding.config}`);
  found.push(...judgeReferences(nodeJudges(node)));
  return found;
}

/** The key of a node naming a stored config or virtual key (`kind`) where a call reaches it through the
 * gateway's own routing: its semantic cache's embedding (`cache.embedding.config`), or a model-judged
 * check (`input_guardrails[0].default.modelJudge.config`); undefined when it names none. */
function routedThroughKey(
  node: Record<string, unknown>,
  kind: keyof typeof JUDGE_KEYS,
  names: ReadonlySet<string>,
): string | undefined {
  const embedded = cacheEmbedding(node)?.[kind];
  if (typeof embedded === 'string' && names.has(embedded)) return `cache.embedding.${kind}`;
  const at = judgeThrough(nodeJudges(node), kind, names);
  return at === undefined ? undefined : `${at}.${kind}`;
}

/** Where the first of `judges` asks its judge through the stored config or virtual key (`kind`) that
 * `names` holds; undefined when none does. */
export function judgeThrough(
  judges: Iterable<{ at: string; parameters: Record<string, unknown> }>,
  kind: keyof typeof JUDGE_KEYS,
  names: ReadonlySet<string>,
): string | undefined {
  for (const { at, parameters } of judges) {
    const named = parameters[kind];
    if (typeof named === 'string' && names.has(named)) return at;
  }
  return undefined;
}

/** The stored documents a config names in any node, as the store indexes them with its version
 * (store `references`). */
export function configReferences(config: unknown): string[] {
  return [...new Set([...configNodes(config)].flatMap(({ node }) => nodeReferences(node)))];
}

/** The stored documents a prompt version names: its destination (a stored config, a virtual key, a
 * catalog provider, or the catalog provider its model names: promptNode), or what its inline config
 * names. */
export function promptReferences(document: PromptDocument): string[] {
  const found = nodeReferences(promptNode(document));
  if (typeof document.config === 'string') found.push(`config:${document.config}`);
  else if (document.config !== undefined) found.push(...configReferences(document.config));
  return [...new Set(found)];
}

/** The stored documents a stored guardrail's definition names: the config or virtual key each of its
 * model-judged checks asks its judge through, as the store indexes them with its version. */
export function guardrailReferences(guardrail: Record<string, unknown>): string[] {
  return [...new Set(judgeReferences(guardrailJudges(guardrail)))];
}

/** `kind:name` for each name of the thing, as the store indexes what names it. */
export const referencesTo = (kind: string, names: ReadonlySet<string>) =>
  [...names].map((name) => `${kind}:${name}`);

/**
 * Records what the workspace's versions stored without their references name. Each check does it first,
 * in the transaction of its change, which a refusal rolls back: a route calls it on the store too, before
 * that transaction, so the record stays.
 */
export async function recordMissingReferences(store: Repositories, workspaceId: string): Promise<void> {
  for (const version of await store.listConfigVersionsWithoutReferences(workspaceId)) {
    const names = configReferences(version.config);
    await store.recordConfigVersionReferences(workspaceId, version.config_id, version.version, names);
  }
  for (const version of await store.listPromptVersionsWithoutReferences(workspaceId)) {
    const names = promptReferences(version.prompt);
    await store.recordPromptVersionReferences(workspaceId, version.prompt_id, version.version, names);
  }
  for (const version of await store.listGuardrailVersionsWithoutReferences(workspaceId)) {
    const names = guardrailReferences(version.guardrail);
    await store.recordGuardrailVersionReferences(workspaceId, version.guardrail_id, version.version, names);
  }
}

/** The versions of the workspace's live prompts that `names` holds, by prompt: those the store finds
 * naming one of `references`, read to tell where. */
async function promptVersionsWhere(
  store: Repositories,
  workspaceId: string,
  references: readonly string[],
  names: (document: PromptDocument) => boolean,
): Promise<NamingPrompt[]> {
  await recordMissingReferences(store, workspaceId);
  const found = new Map<string, NamingPrompt>();
  for (const version of await store.listPromptVersionsReferencing(workspaceId, references)) {
    if (!names(version.prompt)) continue;
    const entry = found.get(version.prompt_id);
    if (entry) entry.versions.push(version.version);
    else found.set(version.prompt_id, { slug: version.slug, versions: [version.version] });
  }
  return [...found.values()];
}

/** The active configs of the workspace with a node that `names` (the key naming it, else undefined),
 * each with the first place: those the store finds naming one of `references`. */
async function activeConfigsWhere(
  store: Repositories,
  workspaceId: string,
  references: readonly string[],
  names: (node: Record<string, unknown>) => string | undefined,
): Promise<NamingConfig[]> {
  await recordMissingReferences(store, workspaceId);
  const found: NamingConfig[] = [];
  for (const config of await store.listConfigsReferencing(workspaceId, references)) {
    if (config.status !== 'active') continue;
    for (const { node, path } of configNodes(config.config)) {
      const key = names(node);
      if (key === undefined) continue;
      found.push({ slug: config.slug, param: configParam(path, key) });
      break;
    }
  }
  return found;
}

/** Deleting a stored config, or archiving it: either way the calls sent to it fail (404). */
export type ConfigRemoval = 'delete' | 'archive';

const CONFIG_REMOVAL = {
  delete: { doing: 'Deleting', verb: 'delete', param: 'id' },
  archive: { doing: 'Archiving', verb: 'archive', param: 'status' },
} as const;

/**
 * Refuses (409 `conflict`) deleting or archiving an active stored config that calls reach: versions of
 * prompts sending their calls to it (naming them by slug with those versions), and what asks for
 * embeddings or a judge's verdict through it — the semantic cache of a node of an active config, or of a
 * prompt version's inline config (`cache.embedding.config`), and a model-judged check of either or of a
 * stored guardrail (`default.modelJudge` `config`), whose calls would fail, the check then erring to its
 * `on_error` (pass, by default). At most NAMED of each are named, the rest counted: `param` id for a
 * delete, status for an archive.
 */
export async function refuseBreakingConfigRemoval(
  store: Repositories,
  config: StoredConfig,
  removal: ConfigRemoval,
): Promise<void> {
  if (config.status !== 'active') return;
  const names = new Set([config.slug, config.id]);
  const found = await usesOf(
    store,
    config.workspace_id,
    referencesTo('config', names),
    (node) => routedThroughKey(node, 'config', names),
    {
      kind: 'config',
      names,
      destination: (document) => typeof document.config === 'string' && names.has(document.config),
    },
  );
  // A config embedding or judging through itself is gone with it: that breaks nothing else.
  const uses = { ...found, configs: found.configs.filter((use) => use.slug !== config.slug) };
  if (!anyUse(uses)) return;
  const { doing, verb, param } = CONFIG_REMOVAL[removal];
  throw new DependentsConflictError(
    `${doing} the config "${config.slug}" would make calls that use it fail: ${listedUses(uses)}. ` +
      `Change them first, or send ?force=true to ${verb} it anyway (calls through them then fail)`,
    uses,
    param,
  );
}

/**
 * Refuses (409 `conflict`, `param` id) deleting a prompt that targets of active stored configs name
 * (`prompt_id`), naming the configs by slug with where each names it (at most NAMED, the rest counted).
 */
export async function refuseBreakingPromptDeletion(store: Repositories, prompt: StoredPrompt): Promise<void> {
  const names = new Set([prompt.slug, prompt.id]);
  const found = await activeConfigsWhere(store, prompt.workspace_id, referencesTo('prompt', names), (node) =>
    typeof node.prompt_id === 'string' && names.has(referenceName(node.prompt_id)) ? 'prompt_id' : undefined,
  );
  if (found.length === 0) return;
  throw new DependentsConflictError(
    `Deleting the prompt "${prompt.slug}" would make configs whose targets name it fail: ` +
      `${listedConfigs(found)}. ` +
      'Change them first, or send ?force=true to delete it anyway (calls through the configs named then fail)',
    { configs: found, prompts: [], guardrails: [] },
    'id',
  );
}

/** The key of a config node naming the credential: a virtual key by `virtual_key`, a catalog provider by
 * `provider: "@<slug or id>"` or `override_params.model: "@<slug or id>/model"` (catalogProvider);
 * undefined when it names neither. */
export function credentialKey(
  node: Record<string, unknown>,
  kind: ProviderCredential['kind'],
  names: ReadonlySet<string>,
): string | undefined {
  if (kind === 'provider') {
    const provider = catalogProvider(node);
    return provider !== undefined && names.has(provider.slug) ? provider.key : undefined;
  }
  const value = node[kind];
  return typeof value === 'string' && names.has(value) ? kind : undefined;
}

/** The stored guardrails of the workspace with a model-judged check asking its judge through the stored
 * config or virtual key (`kind`) that `names` holds, each with the first place
 * (`guardrail.default.modelJudge.config`): those the store finds naming it, read to tell where. */
export async function guardrailsJudgingThrough(
  store: Repositories,
  workspaceId: string,
  kind: keyof typeof JUDGE_KEYS,
  names: ReadonlySet<string>,
): Promise<NamingConfig[]> {
  await recordMissingReferences(store, workspaceId);
  const found: NamingConfig[] = [];
  for (const guardrail of await store.listGuardrailsReferencing(workspaceId, referencesTo(kind, names))) {
    const at = judgeThrough(guardrailJudges(guardrail.guardrail), kind, names);
    if (at !== undefined) found.push({ slug: guardrail.slug, param: `guardrail.${at}.${kind}` });
  }
  return found;
}

/** Whether anything uses it. */
export const anyUse = ({ configs, prompts, guardrails }: Uses) =>
  configs.length + prompts.length + guardrails.length > 0;

/** The active configs whose nodes `names`, and the versions of prompts whose destination
 * (`judged.destination`, or `names` given the version's document as a node: promptNode) or inline
 * config's nodes do; with `judged`, the stored guardrails judging through it too. */
async function usesOf(
  store: Repositories,
  workspaceId: string,
  references: readonly string[],
  names: (node: Record<string, unknown>) => string | undefined,
  judged?: {
    kind: keyof typeof JUDGE_KEYS;
    names: ReadonlySet<string>;
    destination?: (document: PromptDocument) => boolean;
  },
): Promise<Uses> {
  const configs = await activeConfigsWhere(store, workspaceId, references, names);
  const prompts = await promptVersionsWhere(store, workspaceId, references, (document) => {
    if (judged?.destination?.(document)) return true;
    if (names(promptNode(document))) return true;
    if (typeof document.config !== 'object') return false;
    for (const { node } of configNodes(document.config)) if (names(node)) return true;
    return false;
  });
  const guardrails = judged
    ? await guardrailsJudgingThrough(store, workspaceId, judged.kind, judged.names)
    : [];
  return { configs, prompts, guardrails };
}

/**
 * What uses an active virtual key (or catalog provider), none for an inactive one: targets
 * of active stored configs, or versions of prompts (their destination, or the nodes of their inline
 * config), naming it — a virtual key also where a node's semantic cache embeds through it
 * (`cache.embedding.virtual_key`) or a model-judged check judges through it, there or in a stored
 * guardrail.
 */
async function credentialUses(store: Repositories, credential: ProviderCredential): Promise<Uses> {
  if (credential.status !== 'active') return { configs: [], prompts: [], guardrails: [] };
  const { kind, workspace_id: workspaceId } = credential;
  const names = new Set([credential.slug, credential.id]);
  // A virtual key is also what a semantic cache embeds through, and a model-judged check judges through
  // (in a config, or in a stored guardrail).
  return usesOf(
    store,
    workspaceId,
    referencesTo(kind, names),
    (node) =>
      kind === 'virtual_key'
        ? (credentialKey(node, kind, names) ?? routedThroughKey(node, kind, names))
        : credentialKey(node, kind, names),
    kind === 'virtual_key' ? { kind, names } : undefined,
  );
}

export const shownCredential = (credential: ProviderCredential) =>
  credential.kind === 'provider' ? `@${credential.slug}` : credential.slug;

/**
 * Refuses (409 `conflict`, `param` slug) deleting an active virtual key (or catalog provider) that
 * something uses (credentialUses): naming the configs and guardrails with where, and the prompts with
 * their versions.
 */
export async function refuseBreakingCredentialDeletion(
  store: Repositories,
  credential: ProviderCredential,
  noun: string,
): Promise<void> {
  const uses = await credentialUses(store, credential);
  if (!anyUse(uses)) return;
  throw new DependentsConflictError(
    `Deleting the ${noun} "${shownCredential(credential)}" would make calls that use it fail: ` +
      `${listedUses(uses)}. ` +
      'Change them first, or send ?force=true to delete it anyway (calls through them then fail)',
    uses,
    'slug',
  );
}

/**
 * Refuses (409 `conflict`, `param` provider) giving an active virtual key (or catalog provider) that
 * something uses (credentialUses) another provider (`provider`, canonical): what names it was written for
 * the provider it has — the models of their targets and prompt versions, the judge's and the embedding's
 * model, provider settings beside it — and their calls would go to the other one. Changing its secret or
 * its host is not refused: that is how a leaked key is replaced.
 */
export async function refuseBreakingProviderChange(
  store: Repositories,
  credential: ProviderCredential,
  noun: string,
  provider: string,
): Promise<void> {
  if (provider === credential.provider) return;
  const uses = await credentialUses(store, credential);
  if (!anyUse(uses)) return;
  throw new DependentsConflictError(
    `Changing the provider of the ${noun} "${shownCredential(credential)}" from ${credential.provider} to ` +
      `${provider} would send calls written for ${credential.provider} to ${provider}: ${listedUses(uses)}. ` +
      'Change them first, or send ?force=true to change it anyway (their calls then go to ' +
      `${provider} as they are)`,
    uses,
    'provider',
  );
}

/** The item of a config node's guardrail lists naming the stored guardrail (`input_guardrails[1]`): a
 * string item is a stored guardrail's slug or id. */
export function guardrailItem(
  node: Record<string, unknown>,
  names: ReadonlySet<string>,
  lists: readonly (typeof GUARDRAIL_LISTS)[number][] = GUARDRAIL_LISTS,
): string | undefined {
  for (const list of lists) {
    const items = node[list];
    if (!Array.isArray(items)) continue;
    const index = items.findIndex((item) => typeof item === 'string' && names.has(item));
    if (index >= 0) return `${list}[${index}]`;
  }
  return undefined;
}

/**
 * Refuses (409 `conflict`, `param` id) deleting a stored guardrail that a node of an active stored config
 * lists, or of a prompt version's inline config: their calls would fail (400, the guardrail not found),
 * never run unguarded. Names the configs with where, and the prompts with their versions.
 */
export async function refuseBreakingGuardrailDeletion(
  store: Repositories,
  guardrail: StoredGuardrail,
): Promise<void> {
  const names = new Set([guardrail.slug, guardrail.id]);
  const uses = await usesOf(store, guardrail.workspace_id, referencesTo('guardrail', names), (node) =>
    guardrailItem(node, names),
  );
  if (!anyUse(uses)) return;
  throw new DependentsConflictError(
    `Deleting the guardrail "${guardrail.slug}" would make calls that list it fail: ${listedUses(uses)}. ` +
      'Change them first, or send ?force=true to delete it anyway (calls through them then fail)',
    uses,
    'id',
  );
}

/** The side of the call each guardrail list runs on. */
const LIST_EVENTS = { input_guardrails: 'beforeRequestHook', output_guardrails: 'afterRequestHook' } as const;

/**
 * Refuses (409 `conflict`, `param` the first such check) a new definition of a stored guardrail holding a
 * check that cannot run on the side where a node of an active stored config, or of a prompt version's inline
 * config, lists it (`default.requiredMetadataKeys` in `output_guardrails`): their calls would all fail
 * (400), as a config listing it so is refused when stored. Names the configs with where, and the prompts
 * with their versions.
 */
export async function refuseBreakingGuardrailChange(
  store: Repositories,
  guardrail: StoredGuardrail,
  definition: Record<string, unknown>,
): Promise<void> {
  const names = new Set([guardrail.slug, guardrail.id]);
  for (const list of GUARDRAIL_LISTS) {
    const misplaced = checksNotRunningOn(definition, LIST_EVENTS[list]);
    if (misplaced.length === 0) continue;
    const uses = await usesOf(store, guardrail.workspace_id, referencesTo('guardrail', names), (node) =>
      guardrailItem(node, names, [list]),
    );
    if (!anyUse(uses)) continue;
    throw new DependentsConflictError(
      `The guardrail "${guardrail.slug}" would check ${misplaced.join(', ')}, which cannot run where ` +
        `${list} runs it, so calls that list it there would fail: ${listedUses(uses)}. Change them first, ` +
        'or send ?force=true to change it anyway (calls through them then fail)',
      uses,
      `guardrail.${misplaced[0]}`,
    );
  }
}
