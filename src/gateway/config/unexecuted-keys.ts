/**
 * Config keys the spec defines but this gateway does not execute yet: stored prompts (`prompt_id`). A
 * config naming one is refused rather than routed without it. Its shape is still checked first; once it
 * runs, this file and its one call in parse-config.ts go.
 */
import { fieldError } from '../../core/validator/compile-validator.js';
import type { GatewayConfig } from './config-schema.js';

const UNEXECUTED_KEYS = ['prompt_id'] as const satisfies readonly (keyof GatewayConfig)[];

/** Throws `unsupported_parameter` naming the first such key of `node` or of any target below it. */
export function refuseUnexecutedKeys(node: GatewayConfig, path: string): void {
  for (const key of UNEXECUTED_KEYS) {
    if (node[key] === undefined) continue;
    throw fieldError(
      'unsupported_parameter',
      `${path}.${key}`,
      'is not yet executed by this gateway; remove it (a config naming it is refused rather than routed without it)',
    );
  }
  node.targets?.forEach((target, i) => refuseUnexecutedKeys(target, `${path}.targets[${i}]`));
}
