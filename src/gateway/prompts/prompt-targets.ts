/**
 * `prompt_id` in a config: a target that names a stored prompt (`slug`, `slug@latest`, `slug@3`) is sent
 * that prompt instead of the one the call named — rendered with the call's variables, with the prompt's
 * parameters and the caller's overrides as the target's `override_params`, and to the prompt's destination
 * when the target names no provider of its own. So a fallback or a load balance can go across prompts
 * written for different models. Like other settings it passes down to targets below the node that sets it.
 *
 * A prompt completion expands these targets before the call runs (`expandPromptTargets`); any other call
 * naming one is refused (`promptIdPath`), rather than routed as if the key were not there.
 */
import { GatewayError } from '../../core/errors.js';
import type { CallContext, PromptRef } from '../call-context.js';
import type { GatewayConfig, TargetConfig } from '../config/index.js';
import { withModelProvider } from '../config/model-provider.js';
import { HEADERS } from '../context.js';
import type { Lookups } from '../lookups.js';
import { resolveRequestConfig } from '../request-config.js';
import { childPath, configParam } from '../routing/inherit.js';
import { destinationError, preparePromptCall, type PreparedPromptCall } from './prompt-call.js';
import { refuseUnknownVariables } from './render-prompt.js';

const paths = new WeakMap<object, string | null>();

/** The config path of the first `prompt_id` in a config (e.g. `config.targets[1].prompt_id`), or null. */
export function promptIdPath(config: GatewayConfig): string | null {
  const cached = paths.get(config);
  if (cached !== undefined) return cached;
  const find = (node: TargetConfig, path: string): string | null => {
    if (node.prompt_id !== undefined) return configParam(path, 'prompt_id');
    for (const [i, child] of (node.targets ?? []).entries()) {
      const found = find(child, childPath(path, i));
      if (found) return found;
    }
    return null;
  };
  const found = find(config, '');
  paths.set(config, found);
  return found;
}

/** Refuses a config naming `prompt_id` on a call that is not a prompt completion. */
export function refusePromptTargets(config: GatewayConfig): void {
  const path = promptIdPath(config);
  if (path === null) return;
  throw new GatewayError(
    'unsupported_parameter',
    `${path} applies to prompt completions only (POST /v1/prompts/{promptId}/completions): ` +
      'remove it, or call a prompt',
    { param: path },
  );
}

const NAMES_A_PROVIDER = ['provider', 'virtual_key'] as const;

interface Expansion {
  lookups: Lookups;
  ctx: CallContext;
  body: Record<string, unknown>;
  /** The request the called prompt makes, which every target is sent with its override_params over it. */
  called: PreparedPromptCall['request'];
  endpoint: string;
  /** The prompt each expanded target sends, by its path. */
  prompts: Map<string, PromptRef>;
  /** The variables each prompt the call may send reads. */
  known: Array<ReadonlySet<string>>;
  /** The paths of the targets sent to their prompt's destination: its provider settings are stored ones. */
  stored: Set<string>;
}

/** What every target is sent as the request asks it, whichever prompt it sends. */
const THE_CALLS_OWN = new Set(['stream', 'stream_options']);

/**
 * The target with the called prompt's fields that its own prompt does not set removed (an override_params
 * value of undefined removes the field: routing/overrides.ts), so that it is sent its prompt, not the two
 * merged — another prompt's tools, sampling or limit under the other name. A field that override_params set
 * above it in the config (`overridden`) stays for it to inherit.
 */
function withoutCalledFields(
  target: TargetConfig,
  called: Record<string, unknown>,
  overridden: ReadonlySet<string>,
): TargetConfig {
  const own = target.override_params as Record<string, unknown>;
  const removed: Record<string, undefined> = {};
  for (const key of Object.keys(called)) {
    if (!Object.hasOwn(own, key) && !overridden.has(key) && !THE_CALLS_OWN.has(key)) removed[key] = undefined;
  }
  return { ...target, override_params: { ...own, ...removed } };
}

async function expandNode(
  node: TargetConfig,
  path: string,
  inherited: string | undefined,
  overridden: ReadonlySet<string>,
  how: Expansion,
): Promise<TargetConfig> {
  const { prompt_id: own, ...rest } = node;
  const promptId = own ?? inherited;
  if (rest.targets) {
    const below = new Set([...overridden, ...Object.keys(rest.override_params ?? {})]);
    const targets = await Promise.all(
      rest.targets.map((child, i) => expandNode(child, childPath(path, i), promptId, below, how)),
    );
    return { ...rest, targets };
  }
  if (promptId === undefined) return rest;
  const param = configParam(path, 'prompt_id');
  const workspaceId = how.ctx.apiKey.workspace_id;
  // Variables meant for the set of prompts: one prompt may not read them all.
  const body = { ...how.body, allow_unknown_variables: true };
  let prepared;
  try {
    prepared = await preparePromptCall(how.lookups, workspaceId, promptId, body);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    throw new GatewayError(err.code, `${param} "${promptId}": ${err.message}`, { param });
  }
  if (prepared.request.endpoint !== how.endpoint) {
    throw new GatewayError(
      'invalid_config',
      `${param} "${promptId}" is a ${prepared.request.endpoint} prompt; this call is ${how.endpoint}`,
      { param },
    );
  }
  how.prompts.set(path, prepared.prompt);
  how.known.push(prepared.known);
  const {
    stream: _stream,
    stream_options: _options,
    ...rendered
  } = prepared.request.body as Record<string, unknown>;
  const expanded: TargetConfig = { ...rest, override_params: { ...rendered, ...rest.override_params } };
  const called = how.called.body as Record<string, unknown>;
  if (prepared.destination === undefined || NAMES_A_PROVIDER.some((key) => rest[key] !== undefined)) {
    // A target naming no provider of its own sends a catalog model (`@<provider_slug>/<model>`) to that
    // provider, as a config's target so written does (config/model-provider.ts).
    return withModelProvider(withoutCalledFields(expanded, called, overridden));
  }
  let destination;
  try {
    ({ config: destination } = await resolveRequestConfig(
      { [HEADERS.config]: prepared.destination },
      workspaceId,
      how.lookups,
    ));
  } catch (err) {
    throw destinationError(err, prepared.prompt, param);
  }
  // A config naming prompts (this very one, when it is the called prompt's) says where no call goes.
  if (promptIdPath(destination) !== null) {
    throw new GatewayError(
      'invalid_config',
      `${param} "${promptId}": the prompt's destination is a config naming prompt_id targets, not a ` +
        'provider; name the provider or virtual_key on this target',
      { param },
    );
  }
  how.stored.add(path);
  return withoutCalledFields(
    {
      ...destination,
      ...expanded,
      override_params: { ...destination.override_params, ...expanded.override_params },
    },
    called,
    overridden,
  );
}

/**
 * A call that neither its prompt's version nor its body names a model for takes each target's model from
 * the target's override_params (its own or a parent's): a target that names none refuses the call before
 * any target is called, naming it.
 */
function checkModels(config: TargetConfig, called: Record<string, unknown>): void {
  if (called.model !== undefined) return;
  const walk = (node: TargetConfig, path: string, inherited: unknown): void => {
    const model = (node.override_params as Record<string, unknown> | undefined)?.model ?? inherited;
    if (node.targets && node.targets.length > 0) {
      node.targets.forEach((child, i) => walk(child, childPath(path, i), model));
    } else if (typeof model !== 'string') {
      throw new GatewayError(
        'invalid_body',
        "model is required: neither the prompt's version, the request nor " +
          `${path ? `config.${path}` : 'the config'} (override_params) names one`,
        { param: 'model' },
      );
    }
  };
  walk(config, '', undefined);
}

/**
 * The call's context with every target naming a prompt expanded (the same context when none does), once
 * the call is checked against the prompts it may send: a variable that none of them reads — the one it
 * names (`called`, prepared with unknown variables left for here) or a target's — is refused unless the
 * call allows it, and so is a target that would be sent no model.
 */
export async function expandPromptTargets(
  lookups: Lookups,
  ctx: CallContext,
  body: unknown,
  called: PreparedPromptCall,
): Promise<CallContext> {
  const known = [called.known];
  const checked = () => {
    if (!called.allowUnknownVariables) refuseUnknownVariables(called.variables, known);
  };
  const calledBody = called.request.body as Record<string, unknown>;
  if (promptIdPath(ctx.config) === null) {
    checked();
    checkModels(ctx.config, calledBody);
    return ctx;
  }
  const prompts = new Map<string, PromptRef>();
  const stored = new Set<string>();
  const config = await expandNode(ctx.config, '', undefined, new Set(), {
    lookups,
    ctx,
    body: body as Record<string, unknown>,
    called: called.request,
    endpoint: called.request.endpoint,
    prompts,
    known,
    stored,
  });
  checked();
  checkModels(config, calledBody);
  const expanded: CallContext = { ...ctx, config: config as GatewayConfig, targetPrompts: prompts };
  if (ctx.storedSettings !== true && stored.size > 0) {
    expanded.storedSettings = new Set([...(ctx.storedSettings ?? []), ...stored]);
  }
  return expanded;
}
