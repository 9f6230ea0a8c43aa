/**
 * How a target inherits its parent's settings. A child keeps what it sets itself and takes the rest from
 * its parent (already resolved against its own parent). `override_params` merge, the child's keys
 * winning. Provider identity (provider, credentials, addresses) passes down as a whole, and only to a
 * child that names no provider or virtual key of its own, so one provider's key never reaches another.
 * The tree keys (strategy, targets) and the per-node keys (name, weight, on_status_codes) never pass.
 */
import { PROVIDER_TARGET_KEYS } from '../../providers/types.js';
import type { TargetConfig } from '../config/index.js';

/** Settings that apply to every target below the node that sets them. */
const INHERITED_SETTINGS = [
  'override_params',
  'retry',
  'cache',
  'cb_config',
  'request_timeout',
  'forward_headers',
  'strict_compat_compliance',
  'prompt_id',
  'before_request_hooks',
  'after_request_hooks',
  'input_guardrails',
  'output_guardrails',
] as const;

/** Keys that say which provider is called and how; inherited together or not at all. */
const PROVIDER_IDENTITY = ['provider', 'virtual_key', ...PROVIDER_TARGET_KEYS] as const;

/** Whether `node` takes its parent's provider identity: it names no provider or virtual key of its own. */
function takesParentProvider(node: { provider?: unknown; virtual_key?: unknown }): boolean {
  return node.provider === undefined && node.virtual_key === undefined;
}

export function inheritFrom(parent: TargetConfig, child: TargetConfig): TargetConfig {
  const from = parent as Record<string, unknown>;
  const out: Record<string, unknown> = { ...child };
  for (const key of INHERITED_SETTINGS) {
    if (out[key] === undefined && from[key] !== undefined) out[key] = from[key];
  }
  if (child.override_params && parent.override_params) {
    out.override_params = { ...parent.override_params, ...child.override_params };
  }
  if (takesParentProvider(child)) {
    for (const key of PROVIDER_IDENTITY) {
      if (out[key] === undefined && from[key] !== undefined) out[key] = from[key];
    }
  }
  return out as TargetConfig;
}

/** The JSON path of a child, e.g. `targets[1].targets[0]`. */
export function childPath(parentPath: string, index: number): string {
  return parentPath ? `${parentPath}.targets[${index}]` : `targets[${index}]`;
}

/** The param naming `key` of the config node at `path` (`config.targets[1].prompt_id`, `config.strategy`). */
export function configParam(path: string, key: string): string {
  return path ? `config.${path}.${key}` : `config.${key}`;
}
