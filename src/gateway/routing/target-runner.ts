/**
 * One leaf of the target tree: resolve it (virtual key, @slug, custom host), report it as the answering
 * target, and run the gateway's chain of target steps (cache, retry, continuation, deadline, breaker, the
 * call: ../steps/). When the client already holds part of a streamed answer that this target cannot take
 * over (tool calls, several choices), the earlier failure stands.
 */
import { LRUCache } from 'lru-cache';
import { GatewayError } from '../../core/errors.js';
import { gatewayFailure } from '../attempt.js';
import type { TargetConfig } from '../config/index.js';
import { resolveTarget, type ResolvedTarget } from '../resolve-target.js';
import { canTakeOver } from '../steps/continuation-step.js';
import type { TargetCall } from '../steps/target-step.js';
import { overriddenRequest } from './overrides.js';
import {
  recordAttempt,
  type NodeResult,
  type RoutedKind,
  type RoutedRequest,
  type RouteRun,
} from './route-types.js';

const hostAddresses = new LRUCache<string, string>({ max: 1000 });

/** A custom host's origin and path: a query string (which may carry a token) never becomes a shared-state key. */
function hostAddress(customHost: string): string {
  let address = hostAddresses.get(customHost);
  if (address === undefined) {
    const url = new URL(customHost);
    address = url.origin + url.pathname;
    hostAddresses.set(customHost, address);
  }
  return address;
}

/** Where a target is reached, without secrets: its custom host, or its region / resource / deployment. */
export function addressOf(resolved: ResolvedTarget): string | undefined {
  const t = resolved.target;
  if (t.custom_host) return hostAddress(t.custom_host);
  const parts = [
    t.resource_name,
    t.deployment_id,
    t.cloudb_project_id,
    t.cloudb_region,
    t.cloudc_region,
    t.cloudd_region,
    t.cloudd_resource_name,
    t.cloudd_deployment_name,
    t.cloudd_endpoint_name,
  ].filter((p): p is string => typeof p === 'string' && p.length > 0);
  return parts.length > 0 ? parts.join('/') : undefined;
}

/**
 * Runs one leaf. A target resolved at once (one that names its provider) goes to the step chain without
 * an async frame of its own; one behind a virtual key or an `@slug` after its lookup.
 */
export function runTarget(run: RouteRun, node: TargetConfig, path: string): Promise<NodeResult> {
  const { deps, call } = run;
  const started = performance.now();
  let resolved: ResolvedTarget | Promise<ResolvedTarget>;
  try {
    resolved = resolveTarget(
      node,
      path,
      call.ctx.apiKey.workspace_id,
      call.ctx.clientApiKey,
      deps.lookups,
      deps.settings.customHostPolicy,
    );
  } catch (err) {
    return refused(run, path, null, started, err);
  }
  return resolved instanceof Promise
    ? resolved.then(
        (target) => runResolved(run, node, path, target),
        (err: unknown) => refused(run, path, null, started, err),
      )
    : runResolved(run, node, path, resolved);
}

/**
 * A target the config makes impossible to call (a virtual key or provider that does not exist, a bad
 * override): the request fails with the config's error, even under a fallback node, so the mistake is not
 * hidden. It is noted in the walk's history and named as the last target, so that the calls made before
 * it keep their records and the answer's headers point at the target at fault.
 */
function refused(
  run: RouteRun,
  path: string,
  provider: string | null,
  started: number,
  err: unknown,
): Promise<never> {
  if (err instanceof GatewayError) {
    const { body, state } = run.call;
    recordAttempt(run, {
      path,
      provider,
      model: typeof body.model === 'string' ? body.model : undefined,
      body,
      outcome: gatewayFailure(err, 'config'),
      started,
      retry: 0,
    });
    state.targetPath = path;
    state.provider = provider;
  }
  return Promise.reject(err);
}

function runResolved(
  run: RouteRun,
  node: TargetConfig,
  path: string,
  resolved: ResolvedTarget,
): Promise<NodeResult> {
  const { call } = run;
  const { state } = call;
  let request: RoutedRequest;
  try {
    request = overriddenRequest(call, node, path);
  } catch (err) {
    return refused(run, path, resolved.adapter.id, performance.now(), err);
  }
  const model = request.body.model;
  // Part of an answer went out and this target cannot take it over, or a pass-through's body went out
  // and was too large to be kept for another send: the earlier failure stands.
  if (
    run.lastFailure &&
    ((call.sink && call.sink.written > 0 && !canTakeOver(run, request)) ||
      call.passthrough?.body?.canSend === false)
  ) {
    return Promise.resolve(run.lastFailure);
  }
  // The target the answer's headers and record name: this one from here on (its steps read it), unless
  // it fails without being tried at all (the request's deadline passed first), when the last one tried
  // stays named.
  const named = { path: state.targetPath, provider: state.provider };
  const attempts = run.attempts.length;
  state.targetPath = path;
  state.provider = resolved.adapter.id;
  return call.chain(targetCallOf(request, run, node, path, resolved, model)).then((outcome) => {
    const result: NodeResult = { outcome, resolved, requestBody: request.body };
    if (!outcome.ok) {
      run.lastFailure = result;
      if (run.attempts.length === attempts) {
        state.targetPath = named.path;
        state.provider = named.provider;
      }
    }
    return result;
  });
}

/** The first call of a target: the routed request with the node's override_params, and where it goes. */
function targetCallOf<K extends RoutedKind>(
  { endpoint, body }: RoutedRequest<K>,
  run: RouteRun,
  node: TargetConfig,
  path: string,
  resolved: ResolvedTarget,
  model: string | undefined,
): TargetCall<K> {
  const address = addressOf(resolved);
  return { run, node, path, resolved, endpoint, body, model, address, sink: run.call.sink, retry: 0 };
}
