/**
 * The router: walks the config's target tree and runs attempts until one answers.
 *
 * - `single` (or no strategy): the node itself, or its one target.
 * - `loadbalance`: one target drawn by `weight`; its result is the node's (no second draw), unless its
 *   circuit is open: then another is drawn from the rest.
 * - `fallback`: targets in order until one answers; a failure moves on when its status is in
 *   `strategy.on_status_codes`, or on any failure when that list is absent.
 * - `conditional`: the first condition whose query matches picks the target named by `then`, else
 *   `default`.
 *
 * Children inherit their parent's settings (./routing/inherit.ts). Each leaf runs with its breaker and
 * retry policy (./routing/target-runner.ts).
 */
import { requestPath } from './call-context.js';
import type { TargetConfig } from './config/index.js';
import type { AttemptOutcome } from './attempt.js';
import type { GatewayDeps } from './deps.js';
import { GatewayError } from '../core/errors.js';
import { evaluateCondition } from './routing/conditions.js';
import { childPath, configParam, inheritFrom } from './routing/inherit.js';
import type { NodeResult, RoutedCall, RouteRun } from './routing/route-types.js';
import { runTarget } from './routing/target-runner.js';
import { asksAnotherTry } from './routing/retry-policy.js';
import { pickWeighted, weightsOf } from './routing/weighted-pick.js';

export type { RouteState, RoutedCall } from './routing/route-types.js';
export type RouteResult = NodeResult;

/** Walks the call's config; `run` is handed in so the caller keeps the walk's history (attempts). */
export function newRouteRun(deps: GatewayDeps, call: RoutedCall): RouteRun {
  return {
    deps,
    call,
    deadline: call.ctx.startedAt + deps.settings.defaultRequestTimeoutMs,
    lastFailure: undefined,
    attempts: [],
    hooks: undefined,
  };
}

export function route(run: RouteRun): Promise<RouteResult> {
  return runNode(run, run.call.ctx.config, '');
}

function runNode(run: RouteRun, node: TargetConfig, path: string): Promise<NodeResult> {
  const strategy = node.strategy;
  const targets = node.targets;
  // A leaf (most configs are one): its target's promise itself, with no async frame of this function's
  // around it (returning a promise from an async function costs the call two more microtask turns).
  if (!strategy || !targets || targets.length === 0) return runTarget(run, node, path);
  return runStrategy(run, node, strategy, targets, path);
}

async function runStrategy(
  run: RouteRun,
  node: TargetConfig,
  strategy: NonNullable<TargetConfig['strategy']>,
  targets: NonNullable<TargetConfig['targets']>,
  path: string,
): Promise<NodeResult> {
  const child = (index: number) => runNode(run, inheritFrom(node, targets[index]), childPath(path, index));

  switch (strategy.mode) {
    case 'single':
      return child(0);
    case 'loadbalance':
      return loadbalance(run, path, targets, child);
    case 'conditional':
      return child(conditionalTarget(run, node, path));
    case 'fallback':
      return fallback(run, node, path, child);
    default:
      throw new GatewayError('invalid_config', `Unknown strategy mode "${String(strategy.mode)}"`, {
        param: configParam(path, 'strategy.mode'),
      });
  }
}

/**
 * One target drawn by weight. A target skipped because its circuit is open (no call was made) leaves the
 * pool and another is drawn, so traffic moves to the healthy targets; when every one is open, the last
 * skip is the answer.
 */
async function loadbalance(
  run: RouteRun,
  path: string,
  targets: NonNullable<TargetConfig['targets']>,
  child: (index: number) => Promise<NodeResult>,
): Promise<NodeResult> {
  const weights = weightsOf(targets);
  let index = pickWeighted(weights, run.deps.routing.random);
  if (index < 0) {
    throw new GatewayError(
      'invalid_config',
      `${configParam(path, 'targets')} has no target with a positive weight: give at least one a weight above 0`,
      { param: configParam(path, 'targets') },
    );
  }
  for (;;) {
    const result = await child(index);
    if (!isCircuitOpen(result.outcome) || run.call.ctx.signal.aborted) return result;
    weights[index] = 0;
    const next = pickWeighted(weights, run.deps.routing.random);
    if (next < 0) return result;
    index = next;
  }
}

/** The target was skipped without a call: its circuit (or that of every target below it) is open. */
function isCircuitOpen(outcome: AttemptOutcome): boolean {
  return !outcome.ok && outcome.error instanceof GatewayError && outcome.error.code === 'circuit_open';
}

async function fallback(
  run: RouteRun,
  node: TargetConfig,
  path: string,
  child: (index: number) => Promise<NodeResult>,
): Promise<NodeResult> {
  const codes = node.strategy?.on_status_codes ?? node.on_status_codes;
  const { sink, ctx } = run.call;
  let last: NodeResult | undefined;
  for (let i = 0; i < (node.targets?.length ?? 0); i++) {
    if (last) {
      if (!fallsBack(last.outcome, codes)) return last;
      // Part of an answer went out that no other target can take over (tool calls, several choices).
      if (sink && sink.written > 0 && !sink.continuable) return last;
    }
    last = await child(i);
    if (last.outcome.ok && !asksAnotherTry(last.outcome, codes)) return last;
    if (ctx.signal.aborted) return last;
  }
  return last as NodeResult;
}

/** Whether a failed target hands over to the next one of a fallback node. */
function fallsBack(outcome: AttemptOutcome, codes: readonly number[] | undefined): boolean {
  if (outcome.ok) return asksAnotherTry(outcome, codes);
  if (outcome.reason === 'client_gone') return false;
  // A denial is the config's own verdict: another target is asked only when 446 is listed.
  if (outcome.reason === 'hooks_denied') return codes !== undefined && codes.includes(outcome.status);
  // An open circuit is the gateway's own decision to skip the target, never an answer to pass on.
  if (isCircuitOpen(outcome)) return true;
  return codes === undefined || codes.includes(outcome.status);
}

function conditionalTarget(run: RouteRun, node: TargetConfig, path: string): number {
  const strategy = node.strategy as NonNullable<TargetConfig['strategy']>;
  const targets = node.targets as TargetConfig[];
  const { ctx, body } = run.call;
  const input = { metadata: ctx.metadata, params: body, url: requestPath(ctx.url) };
  let name = strategy.default;
  const conditions = strategy.conditions ?? [];
  for (let i = 0; i < conditions.length; i++) {
    const query = conditions[i].query;
    if (evaluateCondition(query, input)) {
      name = conditions[i].then;
      break;
    }
  }
  const index = targets.findIndex((t) => t.name === name);
  if (index < 0) {
    throw new GatewayError('invalid_config', `No target is named "${name ?? ''}"`, {
      param: configParam(path, 'strategy'),
    });
  }
  return index;
}
