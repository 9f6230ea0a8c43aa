/**
 * The stored documents a config names, checked when the config is stored (as a stored config, or as a
 * prompt version's inline config) rather than when it is first called: a virtual key (`virtual_key`, a
 * cache's `cache.embedding.virtual_key`), a catalog provider (`provider: "@slug"`), a prompt (`prompt_id`,
 * and the version it selects), a stored config (`cache.embedding.config`), the stored guardrails of its
 * guardrail lists, and the config or virtual key a model-judged check (`default.modelJudge`) asks its
 * judge through — whose call would fail, and the check err to its `on_error` (pass, by default). What a
 * call would refuse — a name the workspace does not hold, a revoked credential, an archived config — is
 * refused here, as the stored guardrail check refuses a missing guardrail: 400 `invalid_config` naming the
 * place (`config.targets[1].virtual_key`). So is a `provider` beside a virtual key that is not the key's
 * own (virtual-key-provider.ts), which would send the key's secret to that provider, a host setting
 * beside a stored credential that is not the stored one (credential-host.ts) — the node's own credential,
 * the one a target naming none takes from its parent (routing/inherit.ts), or the one its prompt's version
 * sends its calls to when it is a `prompt_id` target (prompts/prompt-targets.ts) — and Vertex AI settings that,
 * over the credential's, Vertex would not serve together (`cloudb_shared_request_type` with another region
 * than global, or beside `dedicated`: vertex-ai-request-type.ts).
 *
 * `store` is the transaction that stores the config, holding the workspace's references (holdReferences),
 * so that a delete checked against what names the document (destination-dependents.ts) and this check
 * never both pass with the other's change unseen.
 */
import { GatewayError } from '../core/errors.js';
import { sharedRequestTypeRefusal, type VertexCapacity } from '../providers/vertex-ai/index.js';
import type { PromptDocument, ProviderCredential, Repositories } from '../store/types.js';
import { keyAsWritten, type GatewayConfig } from './config/index.js';
import { storedGuardrailRefs } from './config/hook-specs.js';
import {
  movedHostMessage,
  movedHostSetting,
  movedHostSettings,
  movedProject,
  movedProjectMessage,
} from './credential-host.js';
import { guardrailJudges, nodeJudges } from './config/model-judges.js';
import { assertStoredGuardrailsExist } from './hooks/stored-guardrail.js';
import { versionDestination } from './prompts/prompt-call.js';
import {
  parsePromptReference,
  selectPromptVersion,
  storedPrompts,
  type PromptReference,
} from './prompts/prompt-reference.js';
import { childPath, configParam, inheritFrom } from './routing/inherit.js';
import { leafTargets, type LeafTarget } from './routing/leaf-targets.js';
import { providerBesideVirtualKey } from './virtual-key-provider.js';

type Reader = Pick<
  Repositories,
  'getCredential' | 'getConfig' | 'getGuardrail' | 'getPrompt' | 'getPromptVersion'
>;

const missing = (param: string, message: string) =>
  new GatewayError('invalid_config', `${param}: ${message}`, { param });

/** A virtual key or catalog provider named at `param`: there, and active (a revoked one's calls fail). */
async function assertCredential(
  store: Reader,
  workspaceId: string,
  kind: 'virtual_key' | 'provider',
  name: string,
  param: string,
): Promise<ProviderCredential> {
  const credential = await store.getCredential(workspaceId, kind, name);
  const shown = kind === 'virtual_key' ? `virtual key "${name}"` : `provider "@${name}"`;
  if (!credential) {
    const where = kind === 'virtual_key' ? 'in this workspace' : "in this workspace's catalog";
    throw missing(param, `No ${shown} ${where}`);
  }
  if (credential.status !== 'active') throw missing(param, `The ${shown} is revoked: calls using it fail`);
  return credential;
}

/** A prompt named by `prompt_id`, with the version it selects (`slug@3`); `@latest` and the published
 * version always exist. */
async function assertPrompt(store: Reader, workspaceId: string, reference: string, param: string) {
  let parsed;
  try {
    parsed = parsePromptReference(reference);
  } catch (err) {
    if (err instanceof GatewayError) throw missing(param, err.message);
    throw err;
  }
  const prompt = await store.getPrompt(workspaceId, parsed.name);
  if (!prompt) throw missing(param, `No prompt "${parsed.name}" in this workspace`);
  if (
    typeof parsed.selector === 'number' &&
    !(await store.getPromptVersion(workspaceId, prompt.id, parsed.selector))
  ) {
    throw missing(param, `The prompt "${parsed.name}" has no version ${parsed.selector}`);
  }
}

/** A stored config named by a cache's embedding: there, and active (an archived one's calls fail). */
async function assertConfig(store: Reader, workspaceId: string, name: string, param: string) {
  const config = await store.getConfig(workspaceId, name);
  if (!config) throw missing(param, `No config "${name}" in this workspace`);
  if (config.status !== 'active') throw missing(param, `The config "${name}" is archived: calls to it fail`);
}

/** A model-judged check's judge, asked through a stored config or virtual key: there, and usable. */
async function assertJudge(
  store: Reader,
  workspaceId: string,
  parameters: Record<string, unknown>,
  param: string,
) {
  const { config, virtual_key: virtualKey } = parameters;
  if (typeof config === 'string') await assertConfig(store, workspaceId, config, `${param}.config`);
  if (typeof virtualKey === 'string') {
    await assertCredential(store, workspaceId, 'virtual_key', virtualKey, `${param}.virtual_key`);
  }
}

/** The host settings beside a stored credential are its own, and so is a Vertex AI project
 * (credential-host.ts); `shown` names the credential as messages do. */
function assertOwnHost(
  node: GatewayConfig,
  credential: ProviderCredential,
  param: (key: string) => string,
  shown: string,
) {
  const moved = movedHostSetting(node as Record<string, unknown>, credential.secret);
  if (moved !== undefined) throw missing(param(moved), movedHostMessage(moved));
  if (credential.provider !== 'vertex-ai') return;
  const project = movedProject(node as Record<string, unknown>, credential.secret);
  if (project !== undefined) {
    throw missing(param('cloudb_project_id'), movedProjectMessage(shown, project));
  }
}

/** The stored credential a node's calls use: the one it names, or the one it takes from its parent. */
interface UsedCredential {
  credential: ProviderCredential;
  /** As messages name it: `virtual key "vertex-prod"`, `provider "@vertex-prod"`. */
  shown: string;
  /** The node's key that names it. */
  namedBy: 'virtual_key' | 'provider';
}

/** Where a `prompt_id` target naming no provider or virtual key of its own sends its calls: its prompt's
 * destination, with the target's own settings over the destination's (prompts/prompt-targets.ts). */
interface PromptDestination {
  /** As messages name it: `the prompt "support" (version 2) sends its calls to`. */
  shown: string;
  /** The destination's root: its inline or stored config's, or its virtual key or provider. */
  root: Record<string, unknown>;
  /** The stored credential the destination names at its root, if any. */
  used: UsedCredential | undefined;
  /** Whether its root names a provider or virtual key: one naming neither takes the parent's (the call
   * sends the destination with the target's settings over it, as a node of the config: inherit.ts). */
  namesProvider: boolean;
  /** Whether any of its calls goes with the credential its root names (or the parent's, when it names
   * none), and so with the target's own settings: only a target of its tree naming no provider or virtual
   * key below its root takes them (reachesRoot). */
  reached: boolean;
}

/** The root of a version's destination (prompt-call.ts versionDestination): its inline config, its stored
 * config's (an empty one when that is gone: calls fail for it), or its virtual key or provider; undefined
 * when it names none, and the call's own headers say where its calls go. */
export async function destinationRoot(
  store: Pick<Reader, 'getConfig'>,
  workspaceId: string,
  document: PromptDocument,
): Promise<{ root: Record<string, unknown>; through: string } | undefined> {
  const destination = versionDestination(document);
  if (destination === undefined) return undefined;
  if ('stored' in destination) {
    const config = destination.stored;
    const stored = await store.getConfig(workspaceId, config);
    return { root: stored?.status === 'active' ? stored.config : {}, through: ` through config "${config}"` };
  }
  return { root: destination.root, through: 'inline' in destination ? ' through its config' : '' };
}

/** The active stored credential a config node names (`virtual_key`, else `provider: "@slug"`), if any. */
async function namedCredential(
  store: Reader,
  workspaceId: string,
  node: Record<string, unknown>,
): Promise<UsedCredential | undefined> {
  const { virtual_key: virtualKey, provider } = node;
  const named =
    typeof virtualKey === 'string'
      ? ({ kind: 'virtual_key', name: virtualKey, shown: `virtual key "${virtualKey}"` } as const)
      : typeof provider === 'string' && provider.startsWith('@')
        ? ({ kind: 'provider', name: provider.slice(1), shown: `provider "${provider}"` } as const)
        : undefined;
  if (named === undefined) return undefined;
  const credential = await store.getCredential(workspaceId, named.kind, named.name);
  // One missing or revoked fails the calls for that, which the destination was checked for when stored.
  if (!credential || credential.status !== 'active') return undefined;
  return { credential, shown: named.shown, namedBy: named.kind };
}

/**
 * The prompt, and the version of it, a leaf's calls are sent to when it is a `prompt_id` target (its own
 * prompt_id or one it inherits) naming no provider or virtual key of its own; undefined otherwise, and for
 * a reference that does not parse (named by assertPrompt).
 */
export function promptTargetReference(
  node: GatewayConfig,
  effective: GatewayConfig,
): PromptReference | undefined {
  const reference = effective.prompt_id;
  if (reference === undefined || node.targets !== undefined) return undefined;
  if (node.provider !== undefined || node.virtual_key !== undefined) return undefined;
  try {
    return parsePromptReference(reference);
  } catch (err) {
    if (err instanceof GatewayError) return undefined;
    throw err;
  }
}

/** A version of a prompt as a target's reference reaches it: the prompt's name as the reference gives it. */
export interface ReachedVersion {
  name: string;
  number: number;
  document: PromptDocument;
}

/** Whether a call of a destination's tree goes with what its root has (its credential, and the prompt_id
 * target's own settings over it): from a leaf naming no provider or virtual key below the root, since one
 * naming either takes nothing of its parents' provider, credential or host (routing/inherit.ts). With a
 * `setting`, whether the target's own one reaches such a call: from such a leaf that, with the nodes
 * between, does not set it itself (a child's own setting wins over what it inherits). */
function reachesRoot(root: Record<string, unknown>, setting?: string): boolean {
  for (const leaf of leafTargets(root)) {
    const below = leaf.chain.slice(1);
    const takes = ({ own }: { own: Record<string, unknown> }) =>
      own.provider === undefined &&
      own.virtual_key === undefined &&
      (setting === undefined || own[setting] === undefined);
    if (below.every(takes)) return true;
  }
  return false;
}

/** Where a prompt's version sends such a target's calls; undefined when it names no destination. */
async function reachedDestination(
  store: Reader,
  workspaceId: string,
  version: ReachedVersion,
): Promise<PromptDestination | undefined> {
  const destination = await destinationRoot(store, workspaceId, version.document);
  if (destination === undefined) return undefined;
  return {
    shown: `the prompt "${version.name}" (version ${version.number}) sends its calls${destination.through} to`,
    root: destination.root,
    used: await namedCredential(store, workspaceId, destination.root),
    namesProvider: destination.root.provider !== undefined || destination.root.virtual_key !== undefined,
    reached: reachesRoot(destination.root),
  };
}

/**
 * Where a leaf's calls go when it is a `prompt_id` target (promptTargetReference) and its prompt's version
 * (as its reference selects it now) names a destination; undefined otherwise (a reference that selects no
 * version is named by assertPrompt).
 */
async function promptDestination(
  store: Reader,
  workspaceId: string,
  reference: PromptReference | undefined,
): Promise<PromptDestination | undefined> {
  if (reference === undefined) return undefined;
  const { number, version } = await selectPromptVersion(storedPrompts(store), workspaceId, reference);
  if (number === undefined || !version) return undefined;
  return reachedDestination(store, workspaceId, { name: reference.name, number, document: version.prompt });
}

/** A setting of the target's own that refuses each of its calls with the stored credential they go with. */
export interface RefusedCalls {
  /** What refuses them: a host that is not the stored one (credential-host.ts), or Vertex AI settings it
   * would not serve together (vertex-ai-request-type.ts). */
  kind: 'host' | 'capacity';
  /** The target's key: `custom_host`, `cloudb_shared_request_type`. */
  setting: string;
  /** Why, naming the prompt, its version and the credential. */
  message: string;
}

/** A host setting of the target's own that the stored credential its calls go with refuses. */
type RefusedHost = Omit<RefusedCalls, 'kind'>;

/** The first host setting of `node`'s that is not the credential's stored one (credential-host.ts) and
 * reaches a call with it: through its prompt's destination (when it has one) to a target of its tree that
 * does not set it itself. */
function movedHostReaching(
  node: GatewayConfig,
  credential: ProviderCredential,
  destination: PromptDestination | undefined,
): string | undefined {
  return movedHostSettings(node as Record<string, unknown>, credential.secret).find(
    (setting) => destination === undefined || reachesRoot(destination.root, setting),
  );
}

/** The target's own host setting (node) that its prompt's destination sends the credential to, when that
 * is not the stored host (credential-host.ts); undefined when there is none. */
function hostBesideDestination(
  node: GatewayConfig,
  destination: PromptDestination | undefined,
): RefusedHost | undefined {
  if (destination?.used === undefined || !destination.reached) return undefined;
  const { credential, shown } = destination.used;
  const moved = movedHostReaching(node, credential, destination);
  if (moved === undefined) return undefined;
  return { setting: moved, message: `${destination.shown} ${shown}: ${movedHostMessage(moved)}` };
}

/** Whether a node's calls go with its parent's credential: it names no provider or virtual key of its
 * own (routing/inherit.ts), nor does its prompt's destination at its root, whose targets (some of them)
 * then take the parent's. */
function takesParentCredential(node: GatewayConfig, destination: PromptDestination | undefined): boolean {
  return (
    node.provider === undefined &&
    node.virtual_key === undefined &&
    (destination === undefined || (!destination.namesProvider && destination.reached))
  );
}

/**
 * The host setting a node's calls meet (`effective`: its own over its parent's) that the stored credential
 * they go with refuses: its prompt's destination's, or its parent's (`parent`) when it takes that one. The
 * one rule a config is stored by and a prompt change is judged by.
 */
function refusedHost(
  node: GatewayConfig,
  effective: GatewayConfig,
  parent: UsedCredential | undefined,
  destination: PromptDestination | undefined,
): RefusedHost | undefined {
  const besideDestination = hostBesideDestination(node, destination);
  if (besideDestination !== undefined) return besideDestination;
  if (parent === undefined || !takesParentCredential(node, destination)) return undefined;
  // Its parent's settings were judged at the parent: the one refused is its own.
  const moved = movedHostReaching(effective, parent.credential, destination);
  if (moved === undefined) return undefined;
  const message = movedHostMessage(moved);
  return {
    setting: moved,
    message:
      destination === undefined
        ? message
        : `${destination.shown} the ${parent.shown} of the target's parent: ${message}`,
  };
}

/** The stored credential a leaf's parent's calls use (assertNode's `used` at the parent): that of the
 * nearest node above it naming a provider or virtual key, when that is a stored one. */
async function parentCredential(
  store: Reader,
  workspaceId: string,
  leaf: LeafTarget,
): Promise<UsedCredential | undefined> {
  let used: UsedCredential | undefined;
  for (const { own } of leaf.chain.slice(0, -1)) {
    if (own.provider !== undefined || own.virtual_key !== undefined) {
      used = await namedCredential(store, workspaceId, own);
    }
  }
  return used;
}

/** A node's parent as a call resolves it (routing/inherit.ts), with the credential its calls use. */
interface Parent {
  effective: GatewayConfig;
  used: UsedCredential | undefined;
}

const SHARED_REQUEST_TYPE = 'cloudb_shared_request_type' as const;

/**
 * Vertex AI's rule of `cloudb_shared_request_type` (vertex-ai-request-type.ts) on the settings a call of
 * the node meets (`met`): the node's own and its parents' (config-rules.ts judged those alone), or its own
 * over its prompt's destination's, each over the credential's, as resolve-target.ts merges them. Named at
 * the node's own setting that brings the clash, else at the key naming the credential (one stored before
 * the rule). `through`: how the node's calls reach the credential, when its prompt's destination sends them.
 */
function vertexCapacityRefusal(
  node: GatewayConfig,
  met: GatewayConfig,
  used: UsedCredential,
  through?: string,
): RefusedCalls | undefined {
  const stored = used.credential.secret as VertexCapacity;
  const refusal = sharedRequestTypeRefusal({
    cloudb_region: met.cloudb_region ?? stored.cloudb_region,
    cloudb_request_type: met.cloudb_request_type ?? stored.cloudb_request_type,
    cloudb_shared_request_type: met.cloudb_shared_request_type ?? stored.cloudb_shared_request_type,
  });
  if (refusal === undefined) return undefined;
  const own = [refusal.with, SHARED_REQUEST_TYPE, used.namedBy].find((key) => node[key] !== undefined);
  return {
    kind: 'capacity',
    setting: own ?? SHARED_REQUEST_TYPE,
    message:
      through === undefined
        ? `with the settings of the ${used.shown}, ${SHARED_REQUEST_TYPE} ${refusal.reason}`
        : `${through}: with its settings, ${SHARED_REQUEST_TYPE} ${refusal.reason}`,
  };
}

/**
 * What refuses each call of a node at the stored credential it goes with, every one of them: a host setting
 * of its own that is not the stored one (refusedHost), and Vertex AI settings that Vertex would not serve
 * together — those its calls meet through its prompt's destination (the target's own over the
 * destination's: the parent's pass only to a node naming no credential, which the expanded one does), and
 * those they meet with the credential it uses (`used`: its own, or `parent`'s when it takes that). The one
 * rule a config is stored by (the first refusal refuses it) and a change of what its prompt_id targets are
 * sent to is judged by (callsRefusedByVersion, which names them all).
 */
function refusedCalls(
  node: GatewayConfig,
  effective: GatewayConfig,
  parent: UsedCredential | undefined,
  destination: PromptDestination | undefined,
  used: UsedCredential | undefined,
): RefusedCalls[] {
  const refused: RefusedCalls[] = [];
  const host = refusedHost(node, effective, parent, destination);
  if (host !== undefined) refused.push({ kind: 'host', ...host });
  if (destination?.used !== undefined && destination.reached) {
    const met = { ...destination.root, ...node } as GatewayConfig;
    const through = `${destination.shown} ${destination.used.shown}`;
    const capacity = vertexCapacityRefusal(node, met, destination.used, through);
    if (capacity !== undefined) refused.push(capacity);
  }
  if (used === undefined) return refused;
  // A node sent to its prompt's destination names no credential: the one it uses is its parent's.
  const through =
    destination === undefined ? undefined : `${destination.shown} the ${used.shown} of the target's parent`;
  const capacity = vertexCapacityRefusal(node, effective, used, through);
  if (capacity !== undefined) refused.push(capacity);
  return refused;
}

/**
 * The settings of a `prompt_id` target (`leaf`, one promptTargetReference finds a reference for) that the
 * given version of its prompt would refuse each call for, every one (none: an empty list), as this check
 * refuses the config when it is stored (refusedCalls): what a change of the prompt (a version published, or stored as its latest) or of
 * the stored config its versions send their calls to is judged by (prompts/prompt-host-dependents.ts).
 */
export async function callsRefusedByVersion(
  store: Reader,
  workspaceId: string,
  leaf: LeafTarget,
  version: ReachedVersion,
): Promise<RefusedCalls[]> {
  const node = leaf.own as GatewayConfig;
  const parent = await parentCredential(store, workspaceId, leaf);
  const destination = await reachedDestination(store, workspaceId, version);
  // The leaf names no credential of its own (promptTargetReference): it uses its parent's, or none.
  const used = takesParentCredential(node, destination) ? parent : undefined;
  return refusedCalls(node, leaf.node as GatewayConfig, parent, destination, used);
}

async function assertNode(
  store: Reader,
  workspaceId: string,
  node: GatewayConfig,
  path: string,
  parent?: Parent,
) {
  const param = (key: string) => configParam(path, keyAsWritten(node, key));
  const effective = parent ? (inheritFrom(parent.effective, node) as GatewayConfig) : node;
  // A prompt_id target sent to its prompt's destination goes there with its own settings over the
  // destination's, as the call expands it (prompts/prompt-targets.ts): the destination's stored credential
  // goes to the host the target gives, which must be the stored one.
  const reference = promptTargetReference(node, effective);
  const destination = await promptDestination(store, workspaceId, reference);
  // A node naming a provider or virtual key of its own takes none of its parent's (routing/inherit.ts), nor
  // does one sent to a prompt's destination naming one at its root; a destination naming neither (a tree
  // of targets that only set a model) is sent with the parent's credential, to the targets of its tree
  // naming none of their own.
  let used = takesParentCredential(node, destination) ? parent?.used : undefined;
  if (node.virtual_key !== undefined) {
    const key = await assertCredential(
      store,
      workspaceId,
      'virtual_key',
      node.virtual_key,
      param('virtual_key'),
    );
    const refusal =
      node.provider === undefined
        ? undefined
        : providerBesideVirtualKey(node.provider, node.virtual_key, key.provider);
    if (refusal !== undefined) throw missing(param('provider'), refusal);
    assertOwnHost(node, key, param, `virtual key "${node.virtual_key}"`);
    used = { credential: key, shown: `virtual key "${node.virtual_key}"`, namedBy: 'virtual_key' };
  }
  if (node.provider?.startsWith('@')) {
    const slug = node.provider.slice(1);
    const catalog = await assertCredential(store, workspaceId, 'provider', slug, param('provider'));
    assertOwnHost(node, catalog, param, `provider "@${slug}"`);
    // A virtual key beside it is what a call resolves (resolve-target.ts).
    used ??= { credential: catalog, shown: `provider "@${slug}"`, namedBy: 'provider' };
  }
  // A node naming a credential of its own has no prompt destination and takes nothing of its parent's: the
  // checks above and these never both apply.
  const [refused] = refusedCalls(node, effective, parent?.used, destination, used);
  if (refused !== undefined) throw missing(param(refused.setting), refused.message);
  if (node.prompt_id !== undefined)
    await assertPrompt(store, workspaceId, node.prompt_id, param('prompt_id'));
  const embedding = node.cache?.embedding;
  if (embedding?.virtual_key !== undefined) {
    const at = param('cache.embedding.virtual_key');
    await assertCredential(store, workspaceId, 'virtual_key', embedding.virtual_key, at);
  }
  if (embedding?.config !== undefined) {
    await assertConfig(store, workspaceId, embedding.config, param('cache.embedding.config'));
  }
  for (const { at, parameters } of nodeJudges(node as unknown as Record<string, unknown>)) {
    await assertJudge(store, workspaceId, parameters, param(at));
  }
  for (const [i, child] of (node.targets ?? []).entries()) {
    await assertNode(store, workspaceId, child, childPath(path, i), { effective, used });
  }
}

/**
 * Throws 400 `invalid_config`, naming the first place, when a stored document `config` (parsed) names is
 * not one a call could use: not in the workspace, revoked or archived, a prompt's version it does not have.
 */
export async function assertNamedDocumentsExist(
  store: Reader,
  workspaceId: string,
  config: GatewayConfig,
): Promise<void> {
  await assertNode(store, workspaceId, config, '');
  await assertStoredGuardrailsExist(store, workspaceId, storedGuardrailRefs(config, 'config'));
}

/**
 * The same for a stored guardrail's definition (`guardrail`, checked): the stored config or virtual key
 * each model-judged check asks its judge through (`guardrail.default.modelJudge.config`). `store` is the
 * transaction that stores the definition, holding the workspace's references, as for a config.
 */
export async function assertGuardrailDocumentsExist(
  store: Reader,
  workspaceId: string,
  guardrail: Record<string, unknown>,
): Promise<void> {
  for (const { at, parameters } of guardrailJudges(guardrail)) {
    await assertJudge(store, workspaceId, parameters, `guardrail.${at}`);
  }
}

/**
 * The same for what a prompt version names besides a stored config (which is a 404 of its own): its
 * destination's virtual key or catalog provider (`virtual_key`, `provider: "@slug"`), and what its inline
 * config names.
 */
export async function assertVersionDocumentsExist(
  store: Reader,
  workspaceId: string,
  version: { virtual_key?: string; provider?: string; config?: unknown },
  inlineConfig: GatewayConfig | undefined,
): Promise<void> {
  if (version.virtual_key !== undefined) {
    await assertCredential(store, workspaceId, 'virtual_key', version.virtual_key, 'virtual_key');
  }
  if (version.provider?.startsWith('@')) {
    await assertCredential(store, workspaceId, 'provider', version.provider.slice(1), 'provider');
  }
  if (inlineConfig !== undefined) await assertNamedDocumentsExist(store, workspaceId, inlineConfig);
}
