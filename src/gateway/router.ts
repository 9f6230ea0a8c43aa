/**
 * The router: walks the config's target tree and runs attempts until one answers. This version runs the
 * `single` strategy (the root, or the first of its targets); loadbalance, fallback, conditional, retry,
 * the breaker and the cache plug in here.
 */
import type { AdapterRequest, EndpointKind } from '../providers/types.js';
import type { GatewayConfig, TargetConfig } from './config/index.js';
import { runAttempt, type AttemptOutcome } from './attempt.js';
import type { ClientStream } from './client-stream.js';
import type { RequestContext } from './context.js';
import type { GatewayDeps } from './deps.js';
import { resolveTarget, type ResolvedTarget } from './resolve-target.js';

/** What the response headers report; updated as attempts run (streams send headers mid-route). */
export interface RouteState {
  targetPath: string | null;
  provider: string | null;
  retryCount: number;
  cacheStatus: string | null;
}

export interface RoutedCall {
  ctx: RequestContext;
  endpoint: EndpointKind;
  body: Record<string, unknown>;
  stream: boolean;
  client: ClientStream | undefined;
  clientWantsUsage: boolean;
  config: GatewayConfig;
  strictCompat: boolean;
  state: RouteState;
}

export interface RouteResult {
  outcome: AttemptOutcome;
  resolved: ResolvedTarget | undefined;
  /** The body sent to the answering target (override_params applied). */
  requestBody: Record<string, unknown>;
}

/** Keys of a config node that are not provider settings and are never sent upstream. */
export function applyOverrides(body: Record<string, unknown>, node: TargetConfig): Record<string, unknown> {
  const overrides = node.override_params as Record<string, unknown> | undefined;
  return overrides ? { ...body, ...overrides } : body;
}

export function forwardedHeaders(node: TargetConfig, ctx: RequestContext): Record<string, string> {
  const names = node.forward_headers as string[] | undefined;
  const out: Record<string, string> = {};
  if (!names) return out;
  for (const name of names) {
    const value = ctx.headers[name.toLowerCase()];
    if (typeof value === 'string') out[name.toLowerCase()] = value;
  }
  return out;
}

export async function route(deps: GatewayDeps, call: RoutedCall): Promise<RouteResult> {
  const { ctx, config } = call;
  const strategy = config.strategy as { mode?: string } | undefined;
  const targets = config.targets as TargetConfig[] | undefined;
  let node: TargetConfig = config;
  let path = '';
  if (strategy?.mode === 'single' && targets && targets.length > 0) {
    node = { ...stripTree(config), ...targets[0] } as TargetConfig;
    path = 'targets[0]';
  }
  const resolved = await resolveTarget(
    node,
    path,
    ctx.apiKey.workspace_id,
    ctx.headers,
    deps.lookups,
    deps.settings.customHostPolicy,
  );
  call.state.targetPath = path;
  call.state.provider = resolved.adapter.id;
  const body = applyOverrides(call.body, node);
  const request: AdapterRequest = {
    endpoint: call.endpoint,
    body,
    stream: call.stream,
    target: resolved.target,
    forwardHeaders: forwardedHeaders(node, ctx),
    clientHeaders: ctx.headers,
    strictCompat: call.strictCompat,
  };
  const timeout = typeof node.request_timeout === 'number' ? node.request_timeout : undefined;
  const outcome = await runAttempt({
    resolved,
    request,
    upstream: deps.upstream,
    clientSignal: ctx.signal,
    timeoutMs: timeout ?? deps.settings.defaultRequestTimeoutMs,
    idleTimeoutMs: timeout ?? deps.settings.defaultStreamIdleTimeoutMs,
    client: call.client,
    clientWantsUsage: call.clientWantsUsage,
  });
  return { outcome, resolved, requestBody: body };
}

/** A node's own settings without its tree keys, for children to inherit. */
export function stripTree(node: TargetConfig): TargetConfig {
  const { targets: _targets, strategy: _strategy, ...rest } = node as Record<string, unknown>;
  return rest as TargetConfig;
}
