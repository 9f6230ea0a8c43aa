/**
 * The targets of a config that calls go to — its leaves; a node with `targets` only chooses among them —
 * each as a call resolves it (its parents' settings inherited: inherit.ts), with the node as written, its
 * path and the nodes from the top down to it. What a store-time check judges a config's calls by.
 */
import type { TargetConfig } from '../config/index.js';
import { isRecord } from '../config/model-judges.js';
import { childPath, inheritFrom } from './inherit.js';

/** A node as written, with its path. */
export interface WrittenNode {
  own: Record<string, unknown>;
  path: string;
}

/** A leaf as a call resolves it (`node`), as written (`own`), with its path and the nodes from the top
 * down to it (`chain`: where what it inherits is written). */
export interface LeafTarget extends WrittenNode {
  node: Record<string, unknown>;
  chain: readonly WrittenNode[];
}

/** The leaves of `node` (a config, or a node of one under `parent` as a call resolves it, at `path`). */
export function* leafTargets(
  node: unknown,
  parent?: TargetConfig,
  path = '',
  above: readonly WrittenNode[] = [],
): Generator<LeafTarget> {
  if (!isRecord(node)) return;
  const effective = (parent ? inheritFrom(parent, node as TargetConfig) : node) as Record<string, unknown>;
  const chain = [...above, { own: node, path }];
  if (!Array.isArray(node.targets)) {
    yield { node: effective, own: node, path, chain };
    return;
  }
  for (const [i, child] of node.targets.entries()) {
    yield* leafTargets(child, effective as TargetConfig, childPath(path, i), chain);
  }
}
