/**
 * One leaf of the target tree: resolve it, ask its circuit breaker, then call it, retrying as its
 * `retry` says, within the request's deadline. Every call (and every skip by the breaker, every cache hit)
 * is noted as an attempt; when the request took more than one, each becomes a record of its own under the
 * request's trace (see `recordAttempts`). When the client's stream already holds part of an answer, the
 * call is a continuation of that answer.
 */
import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AdapterRequest, EndpointKind } from '../../providers/types.js';
import {
  validateChatCompletionRequest,
  validateCompletionRequest,
  validateEmbeddingRequest,
} from '../../core/schemas/index.js';
import type { TargetConfig } from '../config/index.js';
import type { AttemptFailure, AttemptOutcome } from '../attempt.js';
import { runModelAttempt } from '../fanout.js';
import type { GatewayDeps } from '../deps.js';
import { GatewayError } from '../../core/errors.js';
import { bodyForLog, buildLogRecord, skippedChunksError } from '../log-record.js';
import { resolveTarget, type ResolvedTarget } from '../resolve-target.js';
import type { RoutedCall } from '../router.js';
import { breakerKey, countsAsBreakerFailure } from './circuit-breaker.js';
import { answerFromCache, planCache, storeInCache } from './cache-step.js';
import { buildContinuation, type Continuation } from './continuation.js';
import { isRetryable, retryDelayMs, retryPolicyOf } from './retry-policy.js';
import type { RoutingRuntime } from './runtime.js';
import type { LogRecord } from '../../store/types.js';

/** The state of one request's walk through the tree. */
export interface RouteRun {
  deps: GatewayDeps;
  call: RoutedCall;
  runtime: RoutingRuntime;
  /** performance.now() after which no new call starts and no retry waits (the request's deadline). */
  deadline: number;
  /** The last failed attempt, whatever target it was on. */
  lastFailure: NodeResult | undefined;
  /** Every call, breaker skip and cache answer so far, in order; recorded when the walk ends. */
  attempts: AttemptRecord[];
}

export interface NodeResult {
  outcome: AttemptOutcome;
  resolved: ResolvedTarget | undefined;
  /** The body sent to the target (override_params applied; a continuation when one was needed). */
  requestBody: Record<string, unknown>;
}

export function applyOverrides(body: Record<string, unknown>, node: TargetConfig): Record<string, unknown> {
  const overrides = node.override_params as Record<string, unknown> | undefined;
  return overrides ? { ...body, ...overrides } : body;
}

const VALIDATORS: Record<EndpointKind, (body: unknown) => unknown> = {
  chat: validateChatCompletionRequest,
  completions: validateCompletionRequest,
  embeddings: validateEmbeddingRequest,
};

/**
 * The body a target is sent: the client's with the node's override_params applied. Overrides are checked
 * by the same rules as a client's body, and a bad one is reported where it is in the config.
 */
function overriddenBody(
  body: Record<string, unknown>,
  node: TargetConfig,
  endpoint: EndpointKind,
  path: string,
): Record<string, unknown> {
  if (!node.override_params) return body;
  const merged = applyOverrides(body, node);
  try {
    VALIDATORS[endpoint](merged);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    const where = `config.${path ? `${path}.` : ''}override_params`;
    throw new GatewayError('invalid_config', `${where}: ${err.message}`, {
      param: err.param ? `${where}.${err.param}` : where,
    });
  }
  return merged;
}

export function forwardedHeaders(node: TargetConfig, headers: RoutedCall['ctx']['headers']) {
  const names = node.forward_headers;
  const out: Record<string, string> = {};
  if (!names) return out;
  for (const name of names) {
    const value = headers[name.toLowerCase()];
    if (typeof value === 'string') out[name.toLowerCase()] = value;
  }
  return out;
}

/** A failure the gateway decided on without calling the target (breaker open, deadline passed). */
function gatewayFailure(error: GatewayError, reason: AttemptFailure['reason']): AttemptFailure {
  return {
    ok: false,
    error,
    status: error.status,
    reason,
    afterFirstByte: false,
    usage: undefined,
    ttfbMs: null,
    malformedChunks: 0,
  };
}

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
function addressOf(resolved: ResolvedTarget): string | undefined {
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

export async function runTarget(run: RouteRun, node: TargetConfig, path: string): Promise<NodeResult> {
  const { deps, call } = run;
  const { ctx, state, client } = call;
  const resolved = await resolveTarget(
    node,
    path,
    ctx.apiKey.workspace_id,
    ctx.headers,
    deps.lookups,
    deps.settings.customHostPolicy,
  );
  const provider = resolved.adapter.id;
  state.targetPath = path;
  state.provider = provider;

  const policy = retryPolicyOf(node.retry);
  const cb = node.cb_config;
  const requestBody = overriddenBody(call.body, node, call.endpoint, path);
  const model = requestBody.model as string | undefined;
  const address = addressOf(resolved);
  const key = cb
    ? breakerKey({ workspaceId: ctx.apiKey.workspace_id, provider, baseUrl: address, model })
    : undefined;

  // The cache stands in front of the target (and of its breaker). A continuation is never cached: it is
  // a different question, and the client's answer comes from two targets.
  const cachePlan = client?.started
    ? undefined
    : planCache(run, node, path, { provider, host: address, body: requestBody });
  if (!client?.started) state.cacheStatus = cachePlan ? cachePlan.status : 'DISABLED';
  if (cachePlan) {
    const started = performance.now();
    const cached = await answerFromCache(run, cachePlan);
    if (cached) {
      recordAttempt(run, { path, provider, model, body: requestBody, outcome: cached, started, retry: 0 });
      return { outcome: cached, resolved, requestBody };
    }
  }

  for (let retry = 0; ; retry++) {
    const started = performance.now();
    let continuation: Continuation | undefined;
    if (client?.started) {
      continuation = client.continuable
        ? buildContinuation({
            endpoint: call.endpoint,
            body: call.body,
            text: client.text.get(0) ?? '',
            identity: client.identity,
            provider,
            model,
          })
        : undefined;
      // Part of an answer went out and this target cannot take it over: the earlier failure stands.
      if (!continuation && run.lastFailure) return run.lastFailure;
    }
    const body = continuation ? applyOverrides(continuation.body, node) : requestBody;
    const result = (outcome: AttemptOutcome): NodeResult => ({ outcome, resolved, requestBody: body });

    const remaining = run.deadline - performance.now();
    const nodeTimeout = node.request_timeout ?? deps.settings.defaultRequestTimeoutMs;
    // Once the client has part of the answer, the request deadline no longer cuts it short: only the
    // per-call deadlines apply to the continuation.
    if (remaining <= 0 && !client?.started) {
      const late = gatewayFailure(
        new GatewayError('request_timeout', 'The request ran out of time before an answer'),
        'timeout',
      );
      return remember(run, result(late));
    }

    let decision: 'closed' | 'open' | 'probe' = 'closed';
    if (cb && key) {
      // 'probe' after a cooldown: this call decides whether the circuit closes or opens again.
      decision = await run.runtime.breaker.canPass(key, cb);
      if (decision === 'open') {
        const skipped = gatewayFailure(
          new GatewayError('circuit_open', `The circuit of ${provider} at ${path || 'the root'} is open`),
          'status',
        );
        recordAttempt(run, { path, provider, model, body, outcome: skipped, started, retry });
        return remember(run, result(skipped));
      }
    }

    const request: AdapterRequest = {
      endpoint: call.endpoint,
      body,
      stream: call.stream,
      target: resolved.target,
      forwardHeaders: forwardedHeaders(node, ctx.headers),
      clientHeaders: ctx.headers,
      strictCompat: node.strict_compat_compliance ?? call.strictCompat,
    };
    const capture = cachePlan && call.stream && !client?.started ? ([] as string[]) : undefined;
    const outcome = await runModelAttempt({
      resolved,
      request,
      upstream: deps.upstream,
      clientSignal: ctx.signal,
      timeoutMs: client?.started ? nodeTimeout : Math.max(1, Math.min(nodeTimeout, remaining)),
      idleTimeoutMs: node.request_timeout ?? deps.settings.defaultStreamIdleTimeoutMs,
      client,
      clientWantsUsage: call.clientWantsUsage,
      transformChunk: continuation?.rewrite,
      capture,
    });
    recordAttempt(run, { path, provider, model, body, outcome, started, retry });

    if (cb && key) {
      if (!outcome.ok && countsAsBreakerFailure(outcome, cb)) {
        await run.runtime.breaker.recordFailure(key, cb);
      } else if (outcome.ok || (outcome.reason !== 'client_gone' && outcome.reason !== 'config')) {
        // An answer, even a 4xx, shows the target is up.
        await run.runtime.breaker.recordSuccess(key);
      } else if (decision === 'probe') {
        await run.runtime.breaker.releaseProbe(key);
      }
    }

    if (outcome.ok) {
      if (cachePlan && !continuation) await storeInCache(run, cachePlan, outcome, capture);
      return result(outcome);
    }
    remember(run, result(outcome));
    if (outcome.reason === 'client_gone' || ctx.signal.aborted) return result(outcome);
    if (retry >= policy.retries || !isRetryable(outcome, policy)) return result(outcome);

    const wait = retryDelayMs(outcome, retry + 1, policy, run.runtime.random);
    // A wait that would outlast the request's deadline moves on (to a fallback, if any) instead.
    if (performance.now() + wait >= run.deadline) return result(outcome);
    try {
      await sleep(wait, undefined, { signal: ctx.signal });
    } catch {
      return result(
        gatewayFailure(new GatewayError('request_timeout', 'The client went away'), 'client_gone'),
      );
    }
    state.retryCount += 1;
  }
}

function remember(run: RouteRun, result: NodeResult): NodeResult {
  run.lastFailure = result;
  return result;
}

export interface AttemptRecord {
  path: string;
  provider: string;
  model: string | undefined;
  body: Record<string, unknown>;
  outcome: AttemptOutcome;
  started: number;
  retry: number;
  /** Filled in by recordAttempt. */
  ended?: number;
  cacheStatus?: string | null;
}

/** Notes one call (or one skip by the breaker, or one cache answer) of the walk. */
function recordAttempt(run: RouteRun, record: AttemptRecord): void {
  record.ended = performance.now();
  record.cacheStatus = run.call.state.cacheStatus;
  run.attempts.push(record);
}

/**
 * Writes the walk's attempts as records of their own, each a span under the request's. A request answered
 * (or failed) by its only call writes none: its own record already says everything the attempt's would,
 * and the log store writes half the rows.
 */
export function recordAttempts(run: RouteRun): void {
  if (run.attempts.length < 2) return;
  for (const attempt of run.attempts) run.deps.logWriter.enqueue(attemptLogRecord(run, attempt));
}

function attemptLogRecord(run: RouteRun, record: AttemptRecord): LogRecord {
  const { deps, call } = run;
  const { outcome } = record;
  const bodies = { enabled: deps.settings.logBodies, maxBytes: deps.settings.logBodyMaxBytes };
  let errorCode: string | null = null;
  let errorMessage: string | null = null;
  let status: number;
  if (outcome.ok) {
    status = outcome.status;
    if (outcome.malformedChunks > 0)
      ({ errorCode, errorMessage } = skippedChunksError(outcome.malformedChunks));
  } else {
    status = outcome.reason === 'client_gone' ? 499 : outcome.status;
    errorCode = String(outcome.error.code ?? outcome.error.type);
    errorMessage = `${outcome.reason}: ${outcome.error.message}`;
    if (outcome.malformedChunks > 0)
      errorMessage += ` (${outcome.malformedChunks} malformed chunk(s) skipped)`;
  }
  return buildLogRecord(call.ctx, {
    endpoint: call.endpoint,
    method: 'POST',
    path: call.url.split('?')[0],
    status,
    provider: record.provider,
    model: (outcome.ok ? outcome.model : undefined) ?? record.model ?? null,
    target: record.path,
    stream: call.stream,
    isAttempt: true,
    ttfbMs: outcome.ttfbMs,
    // A failed call is not a billed completion.
    usage: outcome.ok ? outcome.usage : undefined,
    cacheStatus: record.cacheStatus ?? null,
    retryCount: record.retry,
    errorCode,
    errorMessage,
    requestBody: bodyForLog(record.body, bodies),
    responseBody: outcome.ok ? null : bodyForLog(outcome.error.toBody(), bodies),
    startedAt: record.started,
    endedAt: record.ended,
  });
}
