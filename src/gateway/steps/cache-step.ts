/**
 * The simple cache in front of a target (`cache.mode: simple` on the effective node). A HIT answers from
 * the cache (a streamed request replays the stored stream); a MISS, or a REFRESH forced by
 * `x-gateway-cache-force-refresh`, calls on and stores the answer only when it is complete: a successful
 * JSON body, or a stream that one call delivered whole (teed on its way to the client). A continuation is
 * never cached: it is a different question, and the client's answer comes from two targets.
 * `semantic` is refused until it exists.
 */
import { GatewayError } from '../../core/errors.js';
import { cacheKey, maxAgeMs, type CachedAnswer } from '../cache/index.js';
import type { AttemptOutcome, AttemptSuccess } from '../attempt.js';
import { recordAttempt } from '../routing/route-types.js';
import { chunkModel, ForwardingSink, type AnswerChunk } from '../sink.js';
import type { TargetCall, TargetHandler, TargetStep } from './target-step.js';

export type CacheStatus = 'HIT' | 'MISS' | 'REFRESH' | 'DISABLED';

interface CachePlan {
  key: string;
  maxAgeMs: number;
  status: 'MISS' | 'REFRESH';
}

/** The cache plan of a call, or undefined when its node has no cache. Throws for `semantic`. */
function planCache(call: TargetCall): CachePlan | undefined {
  const cache = call.node.cache;
  if (!cache) return undefined;
  if (cache.mode !== 'simple') {
    const param = call.path ? `config.${call.path}.cache.mode` : 'config.cache.mode';
    throw new GatewayError(
      'unsupported_parameter',
      `cache.mode '${cache.mode}' is not available on this gateway; use 'simple'`,
      { param },
    );
  }
  const { ctx, endpoint } = call.run.call;
  const key = cacheKey({
    workspaceId: ctx.apiKey.workspace_id,
    endpoint,
    provider: call.resolved.adapter.id,
    host: call.address,
    model: call.model ?? '',
    body: call.body,
    namespace: ctx.cacheNamespace,
  });
  return { key, maxAgeMs: maxAgeMs(cache), status: ctx.cacheForceRefresh ? 'REFRESH' : 'MISS' };
}

/** Keeps the payload of every chunk on its way, to store a stream that came whole. */
class CacheTee extends ForwardingSink {
  readonly chunks: string[] = [];

  override chunk(chunk: AnswerChunk, raw: string | undefined): Promise<void> | undefined {
    this.chunks.push(raw ?? JSON.stringify(chunk));
    return this.next.chunk(chunk, raw);
  }
}

export const cacheStep: TargetStep = (next) => (call) => {
  const delivered = call.run.call.sink;
  if (delivered && delivered.written > 0) return next(call);
  const plan = planCache(call);
  call.run.call.state.cacheStatus = plan ? plan.status : 'DISABLED';
  return plan ? throughCache(next, call, plan) : next(call);
};

async function throughCache(next: TargetHandler, call: TargetCall, plan: CachePlan): Promise<AttemptOutcome> {
  const { run } = call;
  const started = performance.now();
  const cached = await answerFromCache(call, plan);
  if (cached) {
    const provider = call.resolved.adapter.id;
    recordAttempt(run, {
      path: call.path,
      provider,
      model: call.model,
      body: call.body,
      outcome: cached,
      started,
      retry: 0,
    });
    return cached;
  }
  const tee = call.sink ? new CacheTee(call.sink) : undefined;
  const outcome = await next(tee ? { ...call, sink: tee } : call);
  await storeInCache(call, plan, outcome, tee?.chunks);
  return outcome;
}

/** Answers from the cache when it holds this request's answer; undefined on a miss. */
async function answerFromCache(call: TargetCall, plan: CachePlan): Promise<AttemptSuccess | undefined> {
  if (plan.status === 'REFRESH') return undefined;
  const { run } = call;
  let cached: CachedAnswer | undefined;
  try {
    cached = await run.deps.routing.cache.get(plan.key);
  } catch (err) {
    // A cache that cannot be read is a miss, never a failed request.
    run.deps.logger.warn({ err }, 'response cache read failed');
    return undefined;
  }
  if (!cached) return undefined;
  const { state } = run.call;
  if (cached.kind === 'json') {
    if (call.sink) return undefined;
    state.cacheStatus = 'HIT';
    const body = cached.body as { model?: string };
    return hit(body, body.model);
  }
  if (!call.sink) return undefined;
  // Before the first chunk: the response headers go out with it.
  state.cacheStatus = 'HIT';
  let model: string | undefined;
  for (const text of cached.chunks) {
    const chunk = JSON.parse(text) as AnswerChunk;
    model ??= chunkModel(chunk);
    const pending = call.sink.chunk(chunk, text);
    if (pending) await pending;
  }
  return hit(undefined, model);
}

function hit(body: unknown, model: string | undefined): AttemptSuccess {
  return {
    ok: true,
    status: 200,
    streamed: body === undefined,
    body,
    // Nothing was billed for this answer.
    usage: undefined,
    model,
    upstreamHeaders: {},
    ttfbMs: 0,
    malformedChunks: 0,
  };
}

/** Stores a complete answer. `chunks` are the stream's payloads when the whole stream came from one call. */
async function storeInCache(
  call: TargetCall,
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
    await call.run.deps.routing.cache.set(plan.key, answer, plan.maxAgeMs);
  } catch (err) {
    call.run.deps.logger.warn({ err }, 'response cache write failed');
  }
}
