/**
 * The simple cache in front of a target (`cache.mode: simple` on the effective node). A HIT answers from
 * the cache (a streamed request replays the stored stream); a MISS, or a REFRESH forced by
 * `x-gateway-cache-force-refresh`, calls the target and stores the answer only when it is complete: a
 * successful JSON body, or a stream that one call delivered whole. `semantic` is refused until it exists.
 */
import { cacheKey, maxAgeMs, type CachedAnswer } from '../cache/index.js';
import type { TargetConfig } from '../config/index.js';
import type { AttemptOutcome, AttemptSuccess } from '../attempt.js';
import { GatewayError } from '../../core/errors.js';
import type { RoutedCall } from '../router.js';
import type { Usage } from '../../core/openai-types.js';
import type { RouteRun } from './target-runner.js';

export type CacheStatus = 'HIT' | 'MISS' | 'REFRESH' | 'DISABLED';

export interface CachePlan {
  key: string;
  maxAgeMs: number;
  status: 'MISS' | 'REFRESH';
}

/** The cache plan of a target, or undefined when the node has no cache. Throws for `semantic`. */
export function planCache(
  run: RouteRun,
  node: TargetConfig,
  path: string,
  parts: { provider: string; host: string | undefined; body: Record<string, unknown> },
): CachePlan | undefined {
  const cache = node.cache;
  if (!cache) return undefined;
  if (cache.mode !== 'simple') {
    const param = path ? `config.${path}.cache.mode` : 'config.cache.mode';
    throw new GatewayError(
      'unsupported_parameter',
      `cache.mode '${cache.mode}' is not available on this gateway; use 'simple'`,
      { param },
    );
  }
  const { ctx, endpoint } = run.call;
  const key = cacheKey({
    workspaceId: ctx.apiKey.workspace_id,
    endpoint,
    provider: parts.provider,
    host: parts.host,
    model: typeof parts.body.model === 'string' ? parts.body.model : '',
    body: parts.body,
    namespace: ctx.cacheNamespace,
  });
  return { key, maxAgeMs: maxAgeMs(cache), status: ctx.cacheForceRefresh ? 'REFRESH' : 'MISS' };
}

/** Answers from the cache when it holds this request's answer; undefined on a miss. */
export async function answerFromCache(run: RouteRun, plan: CachePlan): Promise<AttemptSuccess | undefined> {
  if (plan.status === 'REFRESH') return undefined;
  let cached: CachedAnswer | undefined;
  try {
    cached = await run.runtime.cache.get(plan.key);
  } catch (err) {
    // A cache that cannot be read is a miss, never a failed request.
    run.deps.logger.warn({ err }, 'response cache read failed');
    return undefined;
  }
  if (!cached) return undefined;
  const { call } = run;
  if (cached.kind === 'json') {
    if (call.stream) return undefined;
    call.state.cacheStatus = 'HIT';
    const body = cached.body as { model?: string };
    return hit({ body, model: body.model });
  }
  if (!call.stream || !call.client) return undefined;
  // Before the first chunk: the response headers go out with it.
  call.state.cacheStatus = 'HIT';
  return hit(await replayStream(call, cached.chunks));
}

function hit(fields: { body?: unknown; model: string | undefined }): AttemptSuccess {
  return {
    ok: true,
    status: 200,
    streamed: fields.body === undefined,
    body: fields.body,
    // Nothing was billed for this answer.
    usage: undefined,
    model: fields.model,
    upstreamHeaders: {},
    ttfbMs: 0,
    malformedChunks: 0,
  };
}

async function replayStream(call: RoutedCall, chunks: string[]): Promise<{ model: string | undefined }> {
  const client = call.client as NonNullable<RoutedCall['client']>;
  let model: string | undefined;
  for (const text of chunks) {
    const chunk = JSON.parse(text) as Parameters<typeof client.note>[0] & { usage?: Usage | null };
    model ??= chunk.model;
    let out = text;
    if (!call.clientWantsUsage) {
      if (chunk.choices.length === 0) continue;
      if (chunk.usage) {
        delete chunk.usage;
        out = JSON.stringify(chunk);
      }
    }
    client.note(chunk);
    const pending = client.write(out);
    if (pending) await pending;
  }
  return { model };
}

/** Stores a complete answer. `chunks` are the stream's payloads when the whole stream came from one call. */
export async function storeInCache(
  run: RouteRun,
  plan: CachePlan,
  outcome: AttemptOutcome,
  chunks: string[] | undefined,
): Promise<void> {
  if (!outcome.ok || outcome.status < 200 || outcome.status >= 300) return;
  let answer: CachedAnswer;
  if (outcome.streamed) {
    if (!chunks || chunks.length === 0) return;
    answer = { kind: 'stream', chunks, storedAt: Date.now() };
  } else {
    if (outcome.body === undefined) return;
    answer = { kind: 'json', body: outcome.body, storedAt: Date.now() };
  }
  try {
    await run.runtime.cache.set(plan.key, answer, plan.maxAgeMs);
  } catch (err) {
    run.deps.logger.warn({ err }, 'response cache write failed');
  }
}
