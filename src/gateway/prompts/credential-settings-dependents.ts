/**
 * What changing a stored credential's settings (not its provider, destination-dependents.ts) would break
 * among what names it as a target: the targets calls go to (a config's leaves) of active stored configs
 * and of prompt versions' inline configs, and prompt versions sending their calls to it or to one of those
 * configs (with their model; a `prompt_id` target with its prompt's), and active stored configs whose
 * `prompt_id` targets name those versions' prompts, their targets sent to the prompt's destination as a
 * call expands them (stored-prompt-targets.ts). Each is judged as a call finds it
 * before anything is sent — the target (its parents' settings inherited) resolved with the credential's
 * settings (resolve-target.ts), then the provider's request built from it — with the settings before
 * and after the change, for each operation its calls make: a prompt version's, its template's (chat or
 * completions); a judge's, chat; a semantic cache's embedding, embeddings; a stored config's, each of
 * chat, completions and embeddings the provider offers, since its clients choose the endpoint. An
 * operation whose request built before and fails after refuses the change. Which models a provider serves
 * on which endpoint is the provider's to say, not known here (an embeddings request of a chat model
 * builds): so a stored config's target is named when its endpoint stops offering /embeddings (an Azure AI
 * endpoint made a managed one, which scores chat only) whatever its model, while a prompt version, which
 * never embeds, is not. So found, among others:
 *
 * - a host setting the target repeats beside the credential (`custom_host`, `resource_name`, the Azure AI
 *   endpoint's) must be the stored one (credential-host.ts): once the credential's changes, its calls are
 *   refused (400);
 * - an Azure OpenAI deployment chosen by the model the target, its prompt or the version sets
 *   (`override_params.model`, `parameters.model`): a `deployments` list that loses its alias (and has no
 *   default) fails such calls;
 * - a setting the provider needs, removed (an Azure API version, an Azure AI endpoint's region, the host a
 *   keyless credential needed).
 *
 * A virtual key is also what a model-judged check asks its judge through (`default.modelJudge`
 * `virtual_key`): in a stored guardrail (found by the store's index, whichever config lists it), and in the
 * hook and guardrail lists a config's targets run (their own, or those they inherit). The judge's call is
 * the key as a config of its own, with the judged call's model (a judge sets none of its own): judged as a
 * target setting no model is. A judge whose call fails takes its `on_error`, pass by default, so such a
 * change would turn the check off unseen.
 *
 * A virtual key is also what a semantic cache asks its embeddings through (`cache.embedding.virtual_key`,
 * semantic-embedding-target.ts), or a stored config naming it does (`cache.embedding.config`): the
 * embedding's call is an embeddings call with the cache's model (`cache.embedding.model`, else the
 * settings'), to the key as a config of its own, or to that config (its targets' models over it), made
 * for a target's chat and completions calls (an embeddings call is cached exactly). Its failure makes every
 * request a cache miss, so such a change would turn the cache off unseen too. A cache naming no embedding
 * asks through the settings' key (GATEWAY_SEMANTIC_CACHE_VIRTUAL_KEY): the store's index does not find it,
 * and it is not judged, as a delete does not count it.
 *
 * What depends on the client's request (the model it names, where the target sets none and the deployment
 * is picked by it) is not judged: a call that would fail with one model works with another. A change whose
 * calls worked before and fail after is refused (409 `conflict`, naming the setting that breaks them alone
 * and what breaks) unless `?force=true`, as another provider is. A secret is never judged (the route checks
 * only a change of settings that are not secrets, and a failure for a secret the change removes or
 * replaces is not counted), so a leaked key is always replaced, or removed, at once.
 */
import { GatewayError } from '../../core/errors.js';
import { isSecretKey } from '../../observability/redact.js';
import { mergeSettings } from '../../store/credential-settings.js';
import type { AdapterRequest, OperationHandler } from '../../providers/types.js';
import type {
  PromptDocument,
  ProviderCredential,
  Repositories,
  StoredConfig,
  StoredPromptVersion,
} from '../../store/types.js';
import type { TargetConfig } from '../config/index.js';
import { isRecord, nodeJudges } from '../config/model-judges.js';
import { STORED_SECRET_KEYS } from '../credential-host.js';
import type { CustomHostPolicy } from '../custom-host.js';
import type { Settings } from '../../settings.js';
import { targetOf } from '../resolve-target.js';
import { configParam } from '../routing/inherit.js';
import { leafTargets, type LeafTarget } from '../routing/leaf-targets.js';
import { storedPromptVersion } from './prompt-reference.js';
import { expandStoredPromptTargets, type ExpandedPromptTargets } from './stored-prompt-targets.js';
import {
  DependentsConflictError,
  listedUses,
  type NamingConfig,
  type NamingPrompt,
  type Uses,
} from './dependents-conflict.js';
import {
  guardrailsJudgingThrough,
  judgeThrough,
  recordMissingReferences,
  referencesTo,
  shownCredential,
} from './destination-dependents.js';

/** The path of the node nearest the leaf that writes the list (`input_guardrails`) the leaf runs: a list
 * passes down to a node that sets none. */
function writtenAt(leaf: LeafTarget, list: string): string {
  return leaf.chain.findLast(({ own }) => own[list] !== undefined)?.path ?? leaf.path;
}

/** The model `override_params` sets, if any. */
function overrideModel(node: Record<string, unknown>): string | undefined {
  const model = isRecord(node.override_params) ? node.override_params.model : undefined;
  return typeof model === 'string' ? model : undefined;
}

/** A model call's operation, as far as a setting of the credential can break it. */
type Operation = 'chat' | 'completions' | 'embeddings';

/** What a stored config's target is asked with when the caller decides it: any of these. */
const ANY_OPERATION: readonly Operation[] = ['chat', 'completions', 'embeddings'];

/** The operation a prompt version's calls make: its template's. */
const promptOperation = (prompt: PromptDocument): Operation =>
  prompt.template_type === 'completion' ? 'completions' : 'chat';

/** The model a prompt version's calls send, when it sets one. */
const versionModel = (prompt: PromptDocument): string | undefined =>
  typeof prompt.parameters.model === 'string' ? prompt.parameters.model : undefined;

/** The calls a node is judged with: the model they send (undefined: the client's) and the operations they
 * may make. */
interface Calls {
  model: string | undefined;
  operations: readonly Operation[];
}

/** The calls a prompt's version (`slug`, `slug@latest`, `slug@3`) makes, when it is found. */
async function promptCalls(
  store: Repositories,
  workspaceId: string,
  reference: string,
): Promise<Calls | undefined> {
  // A reference no version answers to (`slug@x`) decides nothing; the store's own failures are not ours.
  const selected = await storedPromptVersion(store, workspaceId, reference);
  if (!selected) return undefined;
  const { prompt } = selected.version;
  return { model: versionModel(prompt), operations: [promptOperation(prompt)] };
}

/**
 * The calls a leaf makes: the model they send, as far as the config decides it (undefined when the
 * client's request does), and their operations. A `prompt_id` target sends its prompt's request, with its
 * prompt's operation, the target's own `override_params` over it and a parent's under it (prompt-targets.ts,
 * then the routing's inheritance); another target sends the request it is given (`given`: that of the
 * prompt version that sends its calls to the config, of the semantic cache embedding through it, or any
 * a client sends) with its inherited `override_params` over it.
 */
async function leafCalls(
  leaf: { node: Record<string, unknown>; own: Record<string, unknown> },
  given: Calls,
  prompts: (reference: string) => Promise<Calls | undefined>,
): Promise<Calls> {
  const promptId = leaf.node.prompt_id;
  if (typeof promptId === 'string') {
    const prompt = await prompts(promptId);
    const model = overrideModel(leaf.own) ?? prompt?.model ?? overrideModel(leaf.node) ?? given.model;
    return { model, operations: prompt?.operations ?? given.operations };
  }
  return { model: overrideModel(leaf.node) ?? given.model, operations: given.operations };
}

interface Credential {
  kind: ProviderCredential['kind'];
  names: ReadonlySet<string>;
  provider: string;
  policy: CustomHostPolicy;
}

/** Whether the node names the credential as its target (`virtual_key`, or `provider: "@slug"`). */
function namesCredential(node: Record<string, unknown>, { kind, names }: Credential): boolean {
  const value = node[kind];
  if (typeof value !== 'string') return false;
  return kind === 'provider' ? value.startsWith('@') && names.has(value.slice(1)) : names.has(value);
}

/** The token a built request carries in place of an exchanged one: it is never sent. */
const UNSENT_TOKEN = 'unsent';

/** What a node's calls are asked with when the node sets no model: a name, not a provider's model. */
const ANY_MODEL = 'model';

/** The least body of each operation: what a setting breaks is not in it. */
function bodyOf(operation: Operation, model: string): Record<string, unknown> {
  if (operation === 'completions') return { model, prompt: '.' };
  if (operation === 'embeddings') return { model, input: '.' };
  return { model, messages: [{ role: 'user', content: '.' }] };
}

/**
 * Why a call of the node (`operation`) fails with the credential's settings `stored` before anything is
 * sent — its target resolved as a call resolves it, the provider's request built from it — as far as the
 * node and its model (undefined: the client's) decide it; undefined when it does not, or the provider has
 * no such operation.
 */
async function callFailure(
  node: Record<string, unknown>,
  path: string,
  model: string | undefined,
  operation: Operation,
  stored: Record<string, unknown>,
  credential: Credential,
): Promise<GatewayError | undefined> {
  try {
    const { adapter, target } = targetOf(
      node as TargetConfig,
      { path, clientApiKey: undefined, policy: credential.policy },
      stored,
      credential.provider,
    );
    // With a deployments list, which deployment a call takes is the model's: known only when set here.
    if (model === undefined && target.deployments?.length) return undefined;
    const handler = adapter.operations[operation] as OperationHandler | undefined;
    await handler?.buildRequest({
      endpoint: operation,
      body: bodyOf(operation, model ?? ANY_MODEL),
      stream: false,
      target,
      forwardHeaders: {},
      clientHeaders: {},
      strictCompat: false,
      // A provider's token exchange (a Vertex AI service account) is not made here: its request is built as
      // with the token it would give, so what else the target lacks is judged too. Others get none, as a
      // call gives them none.
      ...(adapter.authenticate && { auth: { accessToken: UNSENT_TOKEN } }),
    } as AdapterRequest);
    return undefined;
  } catch (error) {
    // Only the gateway's own refusals are what a call meets for its settings; anything else is not judged.
    return error instanceof GatewayError ? error : undefined;
  }
}

/**
 * Whether a failure is for a secret the change removes or replaces: a secret's change is never refused. A
 * secret the credential lacked before as after (a keyless credential that loses the host that needed
 * none) is a failure like another.
 */
function forChangedSecret(failure: GatewayError, change: SettingsChange): boolean {
  const key = failure.param?.split('.').at(-1) ?? '';
  const secret = (STORED_SECRET_KEYS as readonly string[]).includes(key) || isSecretKey(key);
  return secret && change.before[key] !== change.after[key];
}

interface Breakage {
  /** The node's key to name where it breaks (`custom_host`, else the key naming the credential, or the
   * judge's: `input_guardrails[0].default.modelJudge.virtual_key`). */
  key: string;
  /** The setting of the PATCH that breaks it. */
  setting: string;
  reason: string;
}

interface SettingsChange {
  before: Record<string, unknown>;
  after: Record<string, unknown>;
  changing: readonly string[];
}

/** The credential's settings before the change with one changed setting as it is after. */
function withOneChange(change: SettingsChange, name: string): Record<string, unknown> {
  const stored = { ...change.before };
  if (change.after[name] === undefined) delete stored[name];
  else stored[name] = change.after[name];
  return stored;
}

/** How the node's calls break when the credential's settings go from `before` to `after`: the first of
 * their operations that worked before and fails after; undefined when none does. */
async function breakage(
  node: Record<string, unknown>,
  path: string,
  { model, operations }: Calls,
  change: SettingsChange,
  credential: Credential,
): Promise<Breakage | undefined> {
  for (const operation of operations) {
    const failing = (stored: Record<string, unknown>) =>
      callFailure(node, path, model, operation, stored, credential);
    if ((await failing(change.before)) !== undefined) continue;
    const failure = await failing(change.after);
    if (failure === undefined || forChangedSecret(failure, change)) continue;
    // A host setting the node gives is named by the node's key; one the credential lacks, by its own.
    const nodeKey = failure.param?.split('.').at(-1) ?? '';
    const hostSetting = node[nodeKey] !== undefined && change.changing.includes(nodeKey);
    return {
      key: hostSetting ? nodeKey : credential.kind,
      setting: hostSetting ? nodeKey : await culprit(failing, change),
      reason: failure.message,
    };
  }
  return undefined;
}

/**
 * The changed setting that breaks the node's calls: the first that does alone (a PATCH may change several,
 * the console's sends them all); else, when only some of them together do, the one the failure names, or
 * the first.
 */
async function culprit(
  failing: (stored: Record<string, unknown>) => Promise<GatewayError | undefined>,
  change: SettingsChange,
): Promise<string> {
  for (const name of change.changing) {
    const failure = await failing(withOneChange(change, name));
    if (failure !== undefined && !forChangedSecret(failure, change)) return name;
  }
  return change.changing[0]!;
}

/** What judging a config needs besides the config: the change, the credential, the calls of prompts
 * `prompt_id` targets name, how a judge asking through the credential breaks, and how a semantic cache's
 * embedding does. */
interface Judging {
  /** A config as its calls go: its prompt_id targets sent to their prompts' destinations. */
  expand: (config: unknown) => Promise<ExpandedPromptTargets>;
  change: SettingsChange;
  credential: Credential;
  prompts: (reference: string) => Promise<Calls | undefined>;
  judge: JudgeBreakage;
  embedding: EmbeddingJudging;
}

/** How a semantic cache's embedding (with its model) breaks when asked through the credential itself
 * (`key`) or a stored config naming it (`config`, by slug or id: undefined for another), and the model a
 * cache naming none embeds with (the settings'). */
interface EmbeddingJudging {
  key: (model: string) => Promise<Breakage | undefined>;
  config: (name: string, model: string) => Promise<Breakage | undefined> | undefined;
  defaultModel: string;
}

/** How the call of a model-judged check asking its judge through the credential breaks, undefined when
 * it does not (or the credential is not one a judge can name). */
type JudgeBreakage = () => Promise<Breakage | undefined>;

/** Where the first of `judges` asks its judge through the credential (a virtual key: `virtual_key`);
 * undefined when none does, or the credential is not one a judge can name. */
function judgeThroughCredential(
  judges: Iterable<{ at: string; parameters: Record<string, unknown> }>,
  { kind, names }: Credential,
): string | undefined {
  if (kind !== 'virtual_key') return undefined;
  const at = judgeThrough(judges, kind, names);
  return at === undefined ? undefined : `${at}.${kind}`;
}

/**
 * How the embedding of the leaf's semantic cache (its own `cache`, or the one it inherits) breaks, with the
 * key naming where it asks (`cache.embedding.virtual_key`, `cache.embedding.config`): a stored config it
 * names (which wins over a key, as embeddingTargetOf has it) is judged with the embedding's model on
 * embeddings, the credential as a config of its own. Only a chat or completions call is embedded: an
 * embeddings call (the cache's own, through a config) is cached exactly, so no chain goes further.
 */
async function embeddingBreakage(
  node: Record<string, unknown>,
  operations: readonly Operation[],
  { credential, embedding }: Judging,
): Promise<(Breakage & { key: string }) | undefined> {
  if (!operations.some((operation) => operation !== 'embeddings')) return undefined;
  const cache = isRecord(node.cache) && node.cache.mode === 'semantic' ? node.cache : undefined;
  // A cache naming none embeds through the settings' key: not found by what the store indexes.
  const named = isRecord(cache?.embedding) ? cache.embedding : undefined;
  if (named === undefined) return undefined;
  const model = typeof named.model === 'string' ? named.model : embedding.defaultModel;
  if (typeof named.config === 'string') {
    const broken = await embedding.config(named.config, model);
    return broken && { ...broken, key: 'cache.embedding.config' };
  }
  const key = named.virtual_key;
  if (credential.kind !== 'virtual_key' || typeof key !== 'string' || !credential.names.has(key)) {
    return undefined;
  }
  const broken = await embedding.key(model);
  return broken && { ...broken, key: 'cache.embedding.virtual_key' };
}

/**
 * The first breakage among a config's targets naming the credential, the model-judged checks its
 * targets run (their own hook and guardrail lists, or those they inherit) asking their judge through
 * it, and the embeddings their semantic caches ask through it: with the path and key of where it is
 * written.
 */
async function configBreakage(
  config: unknown,
  given: Calls,
  judging: Judging,
): Promise<(Breakage & { path: string }) | undefined> {
  const { change, credential, prompts, judge } = judging;
  const expanded = await judging.expand(config);
  for (const leaf of leafTargets(expanded.config)) {
    const calls = await leafCalls(leaf, given, prompts);
    if (namesCredential(leaf.node, credential)) {
      const broken = await breakage(leaf.node, leaf.path, calls, change, credential);
      // A prompt_id target sent to its prompt's destination is named where the config writes it: at its
      // own setting that breaks, else at the key naming the prompt.
      const target = leaf.chain.find(({ own }) => expanded.written.has(own));
      if (broken && target !== undefined) {
        const own = expanded.written.get(target.own)!;
        return {
          ...broken,
          key: own[broken.key] !== undefined ? broken.key : 'prompt_id',
          path: target.path,
        };
      }
      if (broken) return { ...broken, path: leaf.path };
    }
    const at = judgeThroughCredential(nodeJudges(leaf.node), credential);
    if (at !== undefined) {
      const broken = await judge();
      if (broken) return { ...broken, key: at, path: writtenAt(leaf, at.slice(0, at.indexOf('['))) };
    }
    const embedded = await embeddingBreakage(leaf.node, calls.operations, judging);
    if (embedded) return { ...embedded, path: writtenAt(leaf, 'cache') };
  }
  return undefined;
}

/**
 * Refuses (409 `conflict`, `param` the setting) a change of the credential's settings (`settings`, merged
 * as the store merges them; `changing` names those that are not secrets) that would make calls of what
 * names it fail: targets of active stored configs, and versions of prompts (their destination, their
 * inline config's nodes, or those of a stored config naming it, with the version's model), model-judged
 * checks of either or of stored guardrails asking their judge through it, and semantic caches of either
 * embedding through it or through a stored config naming it. Names them as a delete does, with the first
 * one's reason.
 */
export async function refuseBreakingSettingsChange(
  store: Repositories,
  found: ProviderCredential,
  noun: string,
  change: { settings: Record<string, unknown>; changing: readonly string[]; provider: string },
  settings: Pick<Settings, 'customHostPolicy' | 'semanticCacheEmbeddingModel'>,
): Promise<void> {
  if (found.status !== 'active' || change.changing.length === 0) return;
  const credential: Credential = {
    kind: found.kind,
    names: new Set([found.slug, found.id]),
    provider: change.provider,
    policy: settings.customHostPolicy,
  };
  const before = { ...found.secret } as Record<string, unknown>;
  const after = mergeSettings(found.secret, change.settings) as Record<string, unknown>;
  const settingsChange: SettingsChange = { before, after, changing: change.changing };
  const references = referencesTo(found.kind, credential.names);
  await recordMissingReferences(store, found.workspace_id);
  // Each prompt a `prompt_id` target names is read once, and each config judged once per model and
  // operations.
  const promptCallsRead = new Map<string, Promise<Calls | undefined>>();
  const promptCallsOf = (reference: string) => {
    let calls = promptCallsRead.get(reference);
    if (calls === undefined)
      promptCallsRead.set(reference, (calls = promptCalls(store, found.workspace_id, reference)));
    return calls;
  };
  // A judge's call is the credential's own config with the judged call's model, not known here: judged
  // once, as a chat of a target setting no model is (a model judge sets none of its own).
  let judgeBroken: Promise<Breakage | undefined> | undefined;
  const judgeCalls: Calls = { model: undefined, operations: ['chat'] };
  const judge = () =>
    (judgeBroken ??= breakage({ virtual_key: found.slug }, '', judgeCalls, settingsChange, credential));
  const judged = new Map<string, Promise<(Breakage & { path: string }) | undefined>>();
  const judgeConfig = (id: string, config: unknown, calls: Calls) => {
    const key = [id, calls.model ?? '', ...calls.operations].join('\u0000');
    let broken = judged.get(key);
    if (broken === undefined) judged.set(key, (broken = configBreakage(config, calls, judging)));
    return broken;
  };
  // The active configs naming the credential, by slug and id.
  const naming = new Map<string, StoredConfig>();
  const active = async (references: readonly string[]) =>
    (await store.listConfigsReferencing(found.workspace_id, references)).filter(
      (config) => config.status === 'active',
    );
  for (const config of await active(references)) naming.set(config.slug, config).set(config.id, config);
  // A semantic cache's embedding is an embeddings call with the cache's model, through the credential as a
  // config of its own, or through a stored config naming it.
  const embeddingThroughKey = new Map<string, Promise<Breakage | undefined>>();
  const embedding: EmbeddingJudging = {
    key: (model) => {
      let broken = embeddingThroughKey.get(model);
      if (broken === undefined) {
        const calls: Calls = { model, operations: ['embeddings'] };
        broken = breakage({ virtual_key: found.slug }, '', calls, settingsChange, credential);
        embeddingThroughKey.set(model, broken);
      }
      return broken;
    },
    config: (name, model) => {
      const stored = naming.get(name);
      return stored && judgeConfig(stored.id, stored.config, { model, operations: ['embeddings'] });
    },
    defaultModel: settings.semanticCacheEmbeddingModel,
  };
  const judging: Judging = {
    expand: (config) => expandStoredPromptTargets(store, found.workspace_id, config),
    change: settingsChange,
    credential,
    prompts: promptCallsOf,
    judge,
    embedding,
  };

  const breakages: Array<Breakage & { where: string }> = [];
  const configs: NamingConfig[] = [];
  // Judged: those naming it, and those whose semantic cache embeds through one of them (naming it as
  // `config:<name>`). A prompt version sending its calls to one is judged with its own model.
  const judgedConfigs = new Map(naming);
  for (const config of naming.size > 0 ? await active(referencesTo('config', new Set(naming.keys()))) : []) {
    judgedConfigs.set(config.slug, config).set(config.id, config);
  }
  const judgeStored = async (config: StoredConfig) => {
    // A client calls it with any model and on any endpoint.
    const broken = await judgeConfig(config.id, config.config, {
      model: undefined,
      operations: ANY_OPERATION,
    });
    if (!broken) return;
    breakages.push({ ...broken, where: `config "${config.slug}"` });
    configs.push({ slug: config.slug, param: configParam(broken.path, broken.key), reason: broken.reason });
  };
  for (const config of new Set(judgedConfigs.values())) await judgeStored(config);
  const versions = new Map<string, StoredPromptVersion & { slug: string }>();
  for (const named of [references, referencesTo('config', new Set(judgedConfigs.keys()))]) {
    if (named.length === 0) continue;
    for (const version of await store.listPromptVersionsReferencing(found.workspace_id, named)) {
      versions.set(`${version.prompt_id}@${version.version}`, version);
    }
  }
  // Configs whose prompt_id targets name the prompts of those versions send their calls there too: judged
  // as their calls go (expandStoredPromptTargets), whichever version their reference selects.
  const promptNames = new Set([...versions.values()].flatMap(({ slug, prompt_id }) => [slug, prompt_id]));
  const judgedIds = new Set([...judgedConfigs.values()].map(({ id }) => id));
  for (const config of promptNames.size > 0 ? await active(referencesTo('prompt', promptNames)) : []) {
    if (judgedIds.has(config.id)) continue;
    judgedIds.add(config.id);
    await judgeStored(config);
  }
  const prompts = new Map<string, NamingPrompt>();
  for (const version of versions.values()) {
    const { prompt } = version;
    const calls: Calls = { model: versionModel(prompt), operations: [promptOperation(prompt)] };
    const destination = { virtual_key: prompt.virtual_key, provider: prompt.provider };
    const stored = typeof prompt.config === 'string' ? judgedConfigs.get(prompt.config) : undefined;
    const broken = namesCredential(destination, credential)
      ? await breakage(destination, '', calls, settingsChange, credential)
      : stored !== undefined
        ? await judgeConfig(stored.id, stored.config, calls)
        : isRecord(prompt.config)
          ? await configBreakage(prompt.config, calls, judging)
          : undefined;
    if (!broken) continue;
    breakages.push({ ...broken, where: `prompt "${version.slug}@${version.version}"` });
    const entry = prompts.get(version.prompt_id);
    if (entry) entry.versions.push(version.version);
    else {
      prompts.set(version.prompt_id, {
        slug: version.slug,
        versions: [version.version],
        reason: broken.reason,
      });
    }
  }
  // A stored guardrail's model-judged checks ask their judge through a virtual key (or a stored config,
  // judged above), whichever config lists the guardrail.
  const guardrails: NamingConfig[] = [];
  if (found.kind === 'virtual_key') {
    const judging = await guardrailsJudgingThrough(store, found.workspace_id, found.kind, credential.names);
    const broken = judging.length > 0 ? await judge() : undefined;
    if (broken) {
      for (const guardrail of judging) {
        breakages.push({ ...broken, where: `guardrail "${guardrail.slug}"` });
        guardrails.push({ ...guardrail, reason: broken.reason });
      }
    }
  }
  const uses: Uses = { configs, prompts: [...prompts.values()], guardrails };
  const [first] = breakages;
  if (first === undefined) return;
  throw new DependentsConflictError(
    `Changing ${first.setting} of the ${noun} "${shownCredential(found)}" would make calls that use it ` +
      `fail: ${listedUses(uses)} (${first.where}: ${first.reason}). ` +
      'Change them first, or send ?force=true to change it anyway (their calls then fail)',
    uses,
    first.setting,
  );
}
