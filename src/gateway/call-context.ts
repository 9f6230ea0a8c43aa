/**
 * The CallContext: everything the pipeline needs to know about one model call — who is calling, the trace,
 * the resolved config, the client's provider key and the headers a config may forward — built once, by
 * one of the two factories here: from an HTTP request's headers, or from a stored job. Nothing below
 * this file reads the gateway's request headers.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { AbortSignalLike } from '../core/abort.js';
import { GatewayError } from '../core/errors.js';
import type { ApiKey } from '../store/types.js';
import type { GatewayConfig, TargetConfig } from './config/index.js';
import { parseConfig } from './config/index.js';
import {
  newSpanId,
  newTraceId,
  readCacheDirectives,
  readStrictCompat,
  type CallIdentity,
  type RequestContext,
} from './context.js';
import type { Lookups } from './lookups.js';
import { sequentialId } from './ids.js';
import { performance } from 'node:perf_hooks';
import {
  bearerToken,
  resolveRequestConfig,
  type RequestConfig,
  type StoredConfigRef,
} from './request-config.js';

/** The key a call is made under: its tenant, for records, caches and lookups. */
export type CallerKey = Pick<ApiKey, 'id' | 'organisation_id' | 'workspace_id'>;

export interface CallContext extends CallIdentity {
  apiKey: CallerKey;
  /** The config governing the call, validated. */
  config: GatewayConfig;
  /** The stored config it came from, when `x-gateway-config` named one (rate-limit policies' `config`). */
  storedConfig?: StoredConfigRef | undefined;
  /** Provider settings of the config that were written in the store, not sent by the caller: `true` for the
   * whole config (a prompt version's destination), else the paths of the targets that take a `prompt_id`
   * prompt's destination (and those below them). A credential there is a stored one (forwarded-headers.ts). */
  storedSettings?: true | ReadonlySet<string>;
  /** true: answers carry only standard OpenAI fields (see docs/api.md). */
  strictCompat: boolean;
  /** The client's own provider key (`Authorization: Bearer`), for a target that has none of its own. */
  clientApiKey: string | undefined;
  /** The client's request headers (lower-case): what `forward_headers` may pass on and what some
   * providers read (`anthropic-beta`). Empty for a job. */
  clientHeaders: IncomingHttpHeaders;
  /** How the call came in: the method and the path and query under which it is recorded. */
  method: string;
  url: string;
  /** The stored prompt a prompt completion runs and the version it runs: recorded in the log, reported in
   * the answer's headers, and matched by rate-limit policies' `prompt` (id or slug). */
  prompt?: PromptRef;
  /** The prompt each `prompt_id` target sends instead, by the target's path (e.g. `targets[1]`). */
  targetPrompts?: ReadonlyMap<string, PromptRef>;
  /** Set on a job's call that its node's stop, cutting it, gives back to be run again (a batch line's):
   * so cut, the call was one attempt of the job, whose own record is the call that answers it. */
  runAgainIfCut?: boolean;
  /** The gateway's own span a call it makes for a call it serves runs inside (JobCall.withinSpanId). */
  withinSpanId?: string;
}

/** The path of a call's `url`, without its query string: what the log records and conditions match. */
export function requestPath(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

export interface PromptRef {
  id: string;
  slug: string;
  version: number;
}

/**
 * strict_compat_compliance: the config's value, else the header, else true (only standard fields). A
 * malformed header is refused even when the config decides.
 */
function strictCompatOf(config: GatewayConfig, headers: IncomingHttpHeaders): boolean {
  const header = readStrictCompat(headers);
  if (typeof config.strict_compat_compliance === 'boolean') return config.strict_compat_compliance;
  return header ?? true;
}

/** Whether a target's answers keep to OpenAI's fields only: its node's own setting, else the call's. What
 * the adapter is asked for, and so part of what a cached answer is. */
export function targetStrictCompat(node: TargetConfig, ctx: Pick<CallContext, 'strictCompat'>): boolean {
  return node.strict_compat_compliance ?? ctx.strictCompat;
}

/**
 * The context of a call that came in over HTTP: `request` is what the server's onRequest hook read.
 * `bodyModel` is the body's `model`: `@<provider_slug>/<model>` names the provider of a request that names
 * none. `configHeaders` are the headers the config is resolved from, when an ingress adds to the request's
 * own (a prompt's destination): the config they give is a stored one (`storedSettings`), not the caller's.
 */
export function callContextFromRequest(
  lookups: Lookups,
  request: RequestContext,
  how: { method: string; url: string; prompt?: PromptRef },
  bodyModel?: unknown,
  configHeaders: IncomingHttpHeaders = request.headers,
): CallContext | Promise<CallContext> {
  // A header or inline config resolves at once (no promise); a stored one is looked up.
  const resolved = resolveRequestConfig(configHeaders, request.apiKey.workspace_id, lookups, bodyModel);
  const fromStore = configHeaders !== request.headers;
  return resolved instanceof Promise
    ? resolved.then((config) => requestCallContext(request, how, config, fromStore))
    : requestCallContext(request, how, resolved, fromStore);
}

function requestCallContext(
  request: RequestContext,
  how: { method: string; url: string; prompt?: PromptRef },
  { config, stored }: RequestConfig,
  fromStore: boolean,
): CallContext {
  const { headers } = request;
  return {
    requestId: request.requestId,
    traceId: request.traceId,
    spanId: request.spanId,
    parentSpanId: request.parentSpanId,
    spanName: request.spanName,
    metadata: request.metadata,
    apiKey: request.apiKey,
    startedAtMs: request.startedAtMs,
    startedAt: request.startedAt,
    cacheNamespace: request.cacheNamespace,
    cacheForceRefresh: request.cacheForceRefresh,
    signal: request.signal,
    config,
    storedConfig: stored,
    ...(fromStore && { storedSettings: true as const }),
    strictCompat: strictCompatOf(config, headers),
    clientApiKey: bearerToken(headers),
    clientHeaders: headers,
    method: how.method,
    url: how.url,
    prompt: how.prompt,
  };
}

/** What a stored job says of the call it makes (a batch line, a scheduled evaluation). */
export interface JobCall {
  caller: CallerKey;
  /** The config as stored with the job (the same object a client would send). */
  config: Record<string, unknown>;
  /** The endpoint path the call is recorded under, e.g. `/v1/chat/completions`. */
  url: string;
  metadata?: Record<string, string>;
  /** The trace the job's calls belong to; a new one when absent. */
  traceId?: string;
  /** The call's id, when it was drawn before its context (so that a call refused for its config has one
   * too); a new one when absent. */
  requestId?: string;
  signal: AbortSignalLike;
  /** The job is given back and run again when its node's stop cuts its call (CallContext.runAgainIfCut). */
  runAgainIfCut?: boolean;
  /**
   * For a call the gateway makes for a call it serves (a guardrail's judge, the semantic cache's
   * embedding): the gateway's own span it runs inside (the hook's, the request's). The call's span is
   * traced as that span's INTERNAL child rather than as a root SERVER span. Traces only: the call's log
   * record keeps no `parent_span_id`, which names the request a record is an attempt of, and this call is
   * none.
   */
  withinSpanId?: string;
}

/** The context of a call made by the gateway itself for a stored job: no HTTP request behind it. */
export function callContextFromJob(job: JobCall): CallContext {
  let config: GatewayConfig;
  try {
    config = parseConfig(job.config, { authorizationPresent: false, asStored: true });
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw new GatewayError('invalid_config', 'The job carries a config that cannot be read', { cause: err });
  }
  return jobContext(job, config);
}

/** A stored job that keeps the provider-selection headers of the request that created it (a batch):
 * its calls resolve them as that request would have, a stored config by its current version. */
export interface StoredRequestCall extends Omit<JobCall, 'config'> {
  /** Lower-case: `x-gateway-config`, `x-gateway-provider`, `x-gateway-virtual-key`, `authorization`, … */
  headers: IncomingHttpHeaders;
  /** The body's `model`, which names the provider when the headers name none (`@<provider_slug>/<model>`). */
  model?: unknown;
}

export async function callContextFromStoredRequest(
  lookups: Lookups,
  job: StoredRequestCall,
): Promise<CallContext> {
  const { config, stored } = await resolveRequestConfig(
    job.headers,
    job.caller.workspace_id,
    lookups,
    job.model,
  );
  return {
    ...jobContext(job, config),
    // The cache namespace (and force-refresh) of the request that created the job.
    ...readCacheDirectives(job.headers),
    storedConfig: stored,
    strictCompat: strictCompatOf(config, job.headers),
    clientApiKey: bearerToken(job.headers),
    clientHeaders: job.headers,
  };
}

/** What a job's call is before its config is read (who makes it, its ids and trace, what it is recorded
 * under): all a call refused for its config is recorded with (`refuseCall`). */
export type JobCallIdentity = Omit<CallContext, 'config' | 'strictCompat'>;

export function jobCallIdentity(job: Omit<JobCall, 'config'>): JobCallIdentity {
  return {
    requestId: job.requestId ?? sequentialId(),
    traceId: job.traceId ?? newTraceId(),
    spanId: newSpanId(),
    parentSpanId: null,
    spanName: null,
    metadata: job.metadata ?? {},
    apiKey: job.caller,
    startedAtMs: Date.now(),
    startedAt: performance.now(),
    cacheNamespace: null,
    cacheForceRefresh: false,
    signal: job.signal,
    clientApiKey: undefined,
    clientHeaders: {},
    method: 'POST',
    url: job.url,
    runAgainIfCut: job.runAgainIfCut,
    withinSpanId: job.withinSpanId,
  };
}

function jobContext(job: Omit<JobCall, 'config'>, config: GatewayConfig): CallContext {
  return {
    ...jobCallIdentity(job),
    config,
    strictCompat: config.strict_compat_compliance !== false,
  };
}
