/**
 * A config's `override_params.metadata` is set over the chat (or Responses) body of every call through a
 * target that takes it — the target's own, else the nearest parent's (override_params merge key by key,
 * routing/inherit.ts) — and that body's metadata is held to OpenAI's limits (core/metadata-limits.ts):
 * over them, each such call is refused where its target's request is made (routing/overrides.ts). An
 * embeddings or text completion body has no metadata, and is sent without it. A config stored for later is
 * checked for it at once, as its providers are (checkProvidersKnown): its clients choose the endpoint, and
 * on chat the metadata breaks every call. Named where it is written. A request's own config is left to its
 * call.
 *
 * What no call sends is not judged: the parent's metadata at a `prompt_id` target whose prompt's version
 * sets `parameters.metadata` (its parameters are the target's override_params, over the parent's:
 * prompts/prompt-targets.ts), any at a target whose prompt is a text one (its calls are completions), and
 * a config stored with a text prompt (`completion`) as its inline config. Nor is metadata that a change
 * leaves as the stored version has it, at the same place: a config stored before the check is patched in
 * its other fields as before, and its calls are refused as they were.
 */
import { isDeepStrictEqual } from 'node:util';
import { GatewayError } from '../../core/errors.js';
import { checkMetadataLimits } from '../../core/metadata-limits.js';
import type { Repositories } from '../../store/types.js';
import { storedPromptVersion } from '../prompts/prompt-reference.js';
import { childPath } from '../routing/inherit.js';
import type { GatewayConfig } from './config-schema.js';
import { isRecord } from './model-judges.js';

interface Written {
  metadata: unknown;
  /** The path of the node that writes it (`targets[1]`, '' for the root). */
  at: string;
}

/** How a config is judged: where its prompt_id targets' prompts are read, and what it replaces. */
export interface MetadataCheck {
  /** The transaction that stores the config, holding the workspace's references (holdReferences): a
   * prompt's version published or stored meanwhile is either read here or stored after the config. */
  store: Pick<Repositories, 'getPrompt' | 'getPromptVersion'>;
  workspaceId: string;
  /** The config as stored before the change: metadata it holds at the same place is not judged again. */
  stored?: unknown;
}

/** A metadata object of strings; another value is the body schema's to refuse when a call sends it. */
function isStringRecord(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((item) => typeof item === 'string');
}

/** The override_params.metadata a config node writes at `path`, if any. */
function metadataAt(config: unknown, path: string): unknown {
  let node = config;
  for (const match of path.matchAll(/targets\[(\d+)\]/g)) {
    const targets = isRecord(node) ? node.targets : undefined;
    node = Array.isArray(targets) ? targets[Number(match[1])] : undefined;
  }
  const params = isRecord(node) ? node.override_params : undefined;
  return isRecord(params) ? params.metadata : undefined;
}

/** The place a written metadata is named at. */
const param = (at: string) =>
  at ? `config.${at}.override_params.metadata` : 'config.override_params.metadata';

async function checkNode(
  node: GatewayConfig,
  path: string,
  check: MetadataCheck,
  inherited: { written?: Written; promptId?: string },
): Promise<void> {
  const own = (node.override_params as Record<string, unknown> | undefined)?.metadata;
  const written = own !== undefined ? { metadata: own, at: path } : inherited.written;
  const promptId = node.prompt_id ?? inherited.promptId;
  const targets = node.targets ?? [];
  // A node with targets only chooses among them: calls go to its leaves (a `single` without any: itself).
  if (targets.length > 0) {
    for (const [i, target] of targets.entries()) {
      await checkNode(target, childPath(path, i), check, { written, promptId });
    }
    return;
  }
  if (written === undefined || !isStringRecord(written.metadata)) return;
  if (
    check.stored !== undefined &&
    isDeepStrictEqual(metadataAt(check.stored, written.at), written.metadata)
  ) {
    return;
  }
  if (promptId !== undefined) {
    const selected = await storedPromptVersion(check.store, check.workspaceId, promptId);
    const prompt = selected?.version.prompt;
    if (prompt?.template_type === 'completion') return;
    if (written.at !== path && prompt?.parameters.metadata !== undefined) return;
  }
  checkMetadataLimits(written.metadata, param(written.at), 'invalid_config');
}

/** Throws 400 `invalid_config` naming `config.<path>.override_params.metadata` (or one of its keys) when
 * the metadata a target of `config` sends is over the limits. */
export async function checkOverrideMetadata(config: GatewayConfig, check: MetadataCheck): Promise<void> {
  await checkNode(config, '', check, {});
}

/** Why checkOverrideMetadata refuses `config` (its 400 invalid_config), or undefined when it stores it: what
 * a change of a prompt the config's targets select is judged by (prompts/prompt-host-dependents.ts). */
export async function overrideMetadataRefusal(
  config: GatewayConfig,
  check: MetadataCheck,
): Promise<GatewayError | undefined> {
  try {
    await checkOverrideMetadata(config, check);
    return undefined;
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'invalid_config') return err;
    throw err;
  }
}
