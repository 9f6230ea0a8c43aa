/**
 * A config's `override_params.metadata` is set over the body of every call through a target that takes
 * it — the target's own, else the nearest parent's (override_params merge key by key, routing/inherit.ts)
 * — and a chat or Responses body's metadata is held to OpenAI's limits (core/metadata-limits.ts): over
 * them, each such call is refused where its target's request is made (routing/overrides.ts). A config
 * stored for later is checked for it at once, as its providers are (checkProvidersKnown): the metadata
 * the targets meet, named where it is written. A request's own config is left to its call, which an
 * endpoint without metadata (embeddings, text completions) makes without it.
 */
import { checkMetadataLimits } from '../../core/metadata-limits.js';
import type { GatewayConfig } from './config-schema.js';
import { isRecord } from './model-judges.js';

interface Written {
  metadata: unknown;
  /** The path of the node that writes it (`config.targets[1]`). */
  at: string;
}

/** A metadata object of strings; another value is the body schema's to refuse when a call sends it. */
function isStringRecord(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((item) => typeof item === 'string');
}

/** Throws 400 `invalid_config` naming `<path>.override_params.metadata` (or one of its keys) when the
 * metadata a target of `node` takes is over the limits. */
export function checkOverrideMetadata(node: GatewayConfig, path: string, inherited?: Written): void {
  const own = (node.override_params as Record<string, unknown> | undefined)?.metadata;
  const taken = own !== undefined ? { metadata: own, at: path } : inherited;
  const targets = node.targets ?? [];
  // A node with targets only chooses among them: calls go to its leaves (a `single` without any: itself).
  if (targets.length > 0) {
    targets.forEach((target, i) => checkOverrideMetadata(target, `${path}.targets[${i}]`, taken));
    return;
  }
  if (taken !== undefined && isStringRecord(taken.metadata)) {
    checkMetadataLimits(taken.metadata, `${taken.at}.override_params.metadata`, 'invalid_config');
  }
}
