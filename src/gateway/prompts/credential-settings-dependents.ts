/**
 * What changing a stored credential's settings (not its provider, destination-dependents.ts) would break
 * among what names it as a target: the nodes of active stored configs and of prompt versions' inline
 * configs, and prompt versions sending their calls to it. Two kinds of failure are known when the change
 * is made, each found as a call finds it, with the node (its parents' settings inherited) and the
 * credential's settings before and after:
 *
 * - a host setting the node repeats beside the credential (`custom_host`, `resource_name`, the Azure AI
 *   endpoint's) must be the stored one (credential-host.ts): once the credential's changes, the node's
 *   calls are refused (400), and nothing is sent;
 * - an Azure OpenAI deployment chosen by the model the node or the version sets (`override_params.model`,
 *   `parameters.model`): a `deployments` list that loses its alias (and has no default), or a credential
 *   left with no deployment at all, fails every such call (400).
 *
 * What depends on the client's request (a model the client names) is not judged: a call that would fail
 * with one model works with another. A change whose calls worked before and fail after is refused
 * (409 `conflict`, naming the setting and what breaks) unless `?force=true`, as another provider is; a
 * secret's change never reaches here (the route checks only a change of settings that are not secrets),
 * so a leaked key is always replaced at once.
 */
import { GatewayError } from '../../core/errors.js';
import { resolveAzureOpenAIAddress } from '../../providers/azure-openai/azure-openai-address.js';
import { mergeSettings } from '../../store/credential-settings.js';
import type { ProviderCredential, Repositories } from '../../store/types.js';
import type { TargetConfig } from '../config/index.js';
import { isRecord } from '../config/model-judges.js';
import type { CustomHostPolicy } from '../custom-host.js';
import { targetOf } from '../resolve-target.js';
import { childPath, configParam, inheritFrom } from '../routing/inherit.js';
import {
  listedUses,
  recordMissingReferences,
  referencesTo,
  shownCredential,
  type NamingConfig,
  type Uses,
} from './destination-dependents.js';
import type { Broken } from './partial-dependents.js';

/** A node of a config as a call resolves it, its parents' settings inherited, and its path. */
function* effectiveNodes(
  node: unknown,
  parent?: TargetConfig,
  path = '',
): Generator<{ node: Record<string, unknown>; path: string }> {
  if (!isRecord(node)) return;
  const effective = (parent ? inheritFrom(parent, node as TargetConfig) : node) as Record<string, unknown>;
  yield { node: effective, path };
  if (!Array.isArray(node.targets)) return;
  for (const [i, child] of node.targets.entries()) {
    yield* effectiveNodes(child, effective as TargetConfig, childPath(path, i));
  }
}

/** The model a node's calls send, when the node sets it. */
function modelOf(node: Record<string, unknown>, fallback: unknown): string | undefined {
  const model = isRecord(node.override_params) ? node.override_params.model : undefined;
  if (typeof model === 'string') return model;
  return typeof fallback === 'string' ? fallback : undefined;
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

/**
 * Why a call of the node fails with the credential's settings `stored`, as far as the node and its model
 * (undefined: the client's) decide it; undefined when it does not.
 */
function callFailure(
  node: Record<string, unknown>,
  path: string,
  model: string | undefined,
  stored: Record<string, unknown>,
  credential: Credential,
): GatewayError | undefined {
  try {
    const { target } = targetOf(
      node as TargetConfig,
      { path, clientApiKey: undefined, policy: credential.policy },
      stored,
      credential.provider,
    );
    // With a deployments list, which deployment a call takes is the model's: known only when set here.
    if (target.provider === 'azure-openai' && (model !== undefined || !target.deployments?.length)) {
      resolveAzureOpenAIAddress(target, model);
    }
    return undefined;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
}

interface Breakage {
  /** The node's key to name where it breaks (`custom_host`, else the key naming the credential). */
  key: string;
  /** The setting of the PATCH that breaks it. */
  setting: string;
  reason: string;
}

/** How the node's calls break when the credential's settings go from `before` to `after`; undefined
 * when they worked before, or still work. */
function breakage(
  node: Record<string, unknown>,
  path: string,
  model: string | undefined,
  change: { before: Record<string, unknown>; after: Record<string, unknown>; changing: readonly string[] },
  credential: Credential,
): Breakage | undefined {
  if (callFailure(node, path, model, change.before, credential) !== undefined) return undefined;
  const failure = callFailure(node, path, model, change.after, credential);
  if (failure === undefined) return undefined;
  // A host setting the node gives is named by the node's key; one the credential lacks, by its own.
  const param = failure.param ?? '';
  const nodeKey = param.split('.').at(-1) ?? '';
  const hostSetting = node[nodeKey] !== undefined && change.changing.includes(nodeKey);
  const setting = hostSetting
    ? nodeKey
    : (change.changing.find((name) => name === (nodeKey === 'model' ? 'deployments' : nodeKey)) ??
      change.changing[0]);
  return { key: hostSetting ? nodeKey : credential.kind, setting, reason: failure.message };
}

/** The first breakage among a config's nodes naming the credential, with its path. */
function configBreakage(
  config: unknown,
  fallbackModel: unknown,
  change: Parameters<typeof breakage>[3],
  credential: Credential,
): (Breakage & { path: string }) | undefined {
  for (const { node, path } of effectiveNodes(config)) {
    if (!namesCredential(node, credential)) continue;
    const broken = breakage(node, path, modelOf(node, fallbackModel), change, credential);
    if (broken) return { ...broken, path };
  }
  return undefined;
}

/**
 * Refuses (409 `conflict`, `param` the setting) a change of the credential's settings (`settings`, merged
 * as the store merges them; `changing` names those that are not secrets) that would make calls of what
 * names it fail: targets of active stored configs, and versions of prompts (their destination, or their
 * inline config's nodes). Names them as a delete does, with the first one's reason.
 */
export async function refuseBreakingSettingsChange(
  store: Repositories,
  found: ProviderCredential,
  noun: string,
  change: { settings: Record<string, unknown>; changing: readonly string[]; provider: string },
  policy: CustomHostPolicy,
): Promise<void> {
  if (found.status !== 'active' || change.changing.length === 0) return;
  const credential: Credential = {
    kind: found.kind,
    names: new Set([found.slug, found.id]),
    provider: change.provider,
    policy,
  };
  const before = { ...found.secret } as Record<string, unknown>;
  const after = mergeSettings(found.secret, change.settings) as Record<string, unknown>;
  const settingsChange = { before, after, changing: change.changing };
  const references = referencesTo(found.kind, credential.names);
  await recordMissingReferences(store, found.workspace_id);

  const breakages: Array<Breakage & { where: string }> = [];
  const configs: NamingConfig[] = [];
  for (const config of await store.listConfigsReferencing(found.workspace_id, references)) {
    if (config.status !== 'active') continue;
    const broken = configBreakage(config.config, undefined, settingsChange, credential);
    if (!broken) continue;
    breakages.push({ ...broken, where: `config "${config.slug}"` });
    configs.push({ slug: config.slug, param: configParam(broken.path, broken.key) });
  }
  const prompts = new Map<string, Broken>();
  for (const version of await store.listPromptVersionsReferencing(found.workspace_id, references)) {
    const { prompt } = version;
    const destination = { virtual_key: prompt.virtual_key, provider: prompt.provider };
    const broken = namesCredential(destination, credential)
      ? breakage(destination, '', modelOf({}, prompt.parameters.model), settingsChange, credential)
      : isRecord(prompt.config)
        ? configBreakage(prompt.config, prompt.parameters.model, settingsChange, credential)
        : undefined;
    if (!broken) continue;
    breakages.push({ ...broken, where: `prompt "${version.slug}@${version.version}"` });
    const entry = prompts.get(version.prompt_id);
    if (entry) entry.versions.push(version.version);
    else prompts.set(version.prompt_id, { slug: version.slug, versions: [version.version], reason: '' });
  }
  const uses: Uses = { configs, prompts: [...prompts.values()], guardrails: [] };
  const [first] = breakages;
  if (first === undefined) return;
  throw new GatewayError(
    'conflict',
    `Changing ${first.setting} of the ${noun} "${shownCredential(found)}" would make calls that use it ` +
      `fail: ${listedUses(uses)} (${first.where}: ${first.reason}). ` +
      'Change them first, or send ?force=true to change it anyway (their calls then fail)',
    { param: first.setting },
  );
}
