/**
 * The simple cache in front of a target (`cache.mode: simple` on the effective node). A HIT answers from
 * the cache (a streamed request replays the stored stream); a MISS, or a REFRESH forced by
 * `x-gateway-cache-force-refresh`, calls on and stores the answer only when it is complete: a successful
 * JSON body, or a stream that one call delivered whole (teed on its way to the client), once the output
 * checks of the config's hooks have passed it, as the client got it (keepWhenPassed). A continuation is
 * never cached: it is a different question, and the client's answer comes from two targets.
 * A JSON request that misses while an identical one is with the provider on this node waits for that
 * answer and is answered from it (HIT); if that one keeps no answer, it asks the provider itself
 * (cache/in-flight.ts).
 * With `cache.mode: semantic`, a request the semantic cache can compare by meaning is left to the next
 * step (semantic-cache-step.ts); any other is cached here as in `simple` mode. Either way a semantic cache
 * without an embedding model is refused here first (semantic-embedding-target.ts).
 */
import { cacheKey, maxAgeMs, workspaceEntryKey, type CachedAnswer } from '../cache/index.js';
import type { Flight, Landed } from '../cache/in-flight.js';
import { targetStrictCompat } from '../call-context.js';
import { semanticRequestOf } from '../cache/semantic/semantic-key.js';
import { embeddingTargetOf } from './semantic-embedding-target.js';
import { GatewayError } from '../../core/errors.js';
import {
  gatewayFailure,
  MAX_TIMER_MS,
  type AttemptFailure,
  type AttemptOutcome,
  type AttemptSuccess,
} from '../attempt.js';
import { recordAttempt } from '../routing/route-types.js';
import { chunkModel, ForwardingSink, type AnswerChunk, type CallSink } from '../sink.js';
import type { CheckedRewrite } from '../pipeline-types.js';
import type { TargetCall, TargetHandler, TargetStep } from './target-step.js';
import { continuesAStream } from './continuation-step.js';
import { forwardedHeaders } from '../forwarded-headers.js';

export type CacheStatus = 'HIT' | 'MISS' | 'REFRESH' | 'DISABLED';

interface CachePlan {
  key: string;
  /** What the answer is kept under in the response cache: the key, as the workspace's. */
  entryKey: string;
  maxAgeMs: number;
  status: 'MISS' | 'REFRESH';
}

/** The simple cache's key of a call: the semantic cache keeps it too, for exact matches. */
export function exactKeyOf(call: TargetCall): string {
  const { ctx, endpoint } = call.run.call;
  return cacheKey({
    workspaceId: ctx.apiKey.workspace_id,
    endpoint,
    provider: call.resolved.adapter.id,
    host: call.address,
    model: call.model ?? '',
    body: call.body,
    namespace: ctx.cacheNamespace,
    strict: targetStrictCompat(call.node, ctx),
    headers: ctx.clientHeaders,
    forwarded: forwardedHeaders(call.node, ctx, call.resolved),
    target: call.resolved.target,
  });
}

/** The cache plan of a call, or undefined when its node has no cache or the semantic step has it. */
function planCache(call: TargetCall): CachePlan | undefined {
  const cache = call.node.cache;
  if (!cache) return undefined;
  if (cache.mode === 'semantic' && semanticRequestOf(call.endpoint, call.body)) return undefined;
  const { ctx } = call.run.call;
  const key = exactKeyOf(call);
  return {
    key,
    entryKey: workspaceEntryKey(ctx.apiKey.workspace_id, key),
    maxAgeMs: maxAgeMs(cache),
    status: ctx.cacheForceRefresh ? 'REFRESH' : 'MISS',
  };
}

/**
 * Keeps the payload of every chunk on its way, to store a stream that came whole; lets go of them (chunks
 * undefined) once they are more than `maxBytes` characters, past which the cache would refuse the entry,
 * so a long stream that will not be stored is not held whole in memory.
 */
export class CacheTee extends ForwardingSink {
  chunks: string[] | undefined = [];
  private size = 0;

  constructor(
    next: CallSink,
    private readonly maxBytes: number,
  ) {
    super(next);
  }

  override chunk(chunk: AnswerChunk, raw: string | undefined): Promise<void> | undefined {
    if (this.chunks) {
      const text = raw ?? JSON.stringify(chunk);
      // Characters never outnumber UTF-8 bytes, and the stored entry is larger than its payloads.
      this.size += text.length;
      if (this.size > this.maxBytes) this.chunks = undefined;
      else this.chunks.push(text);
    }
    return this.next.chunk(chunk, raw);
  }
}

export const cacheStep: TargetStep = (next) => (call) => {
  if (continuesAStream(call)) return next(call);
  // A semantic cache without an embedding model is refused here, before anything is served: on every
  // endpoint and request alike, not only on those the next step would embed.
  if (call.node.cache?.mode === 'semantic') {
    try {
      embeddingTargetOf(call, call.node.cache);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }
  const plan = planCache(call);
  // A cache without a plan is the semantic step's to answer, and to report.
  if (!plan && call.node.cache) return next(call);
  const { state } = call.run.call;
  state.cacheStatus = plan ? plan.status : 'DISABLED';
  // What an earlier target's semantic cache reported is not this target's (a fallback's) answer.
  state.cacheSimilarity = null;
  state.cacheEntryId = null;
  return plan ? throughCache(next, call, plan) : next(call);
};

/** Notes a cache answer in the walk's history, as a call that took no time upstream. */
export function recordCacheAnswer(call: TargetCall, answer: AttemptSuccess, started: number): void {
  recordAttempt(call.run, {
    path: call.path,
    provider: call.resolved.adapter.id,
    model: call.model,
    body: call.body,
    outcome: answer,
    started,
    retry: 0,
  });
}

async function throughCache(next: TargetHandler, call: TargetCall, plan: CachePlan): Promise<AttemptOutcome> {
  const started = performance.now();
  const cached = await answerFromCache(call, plan);
  if (cached) {
    recordCacheAnswer(call, cached, started);
    return cached;
  }
  const turn = await flightTurn(call, plan.key, plan.maxAgeMs);
  if (turn.kind === 'stopped') return turn.outcome;
  if (turn.kind === 'landed') {
    const answer = await replayAnswer(
      call,
      turn.landed.answer,
      () => (call.run.call.state.cacheStatus = 'HIT'),
    );
    recordCacheAnswer(call, answer, started);
    return answer;
  }
  return callAndKeep(next, call, plan, turn.kind === 'lead' ? turn.flight : undefined);
}

/** What a call that missed does about identical calls in flight (cache/in-flight.ts). */
export type FlightTurn =
  | { kind: 'landed'; landed: Landed }
  | { kind: 'lead'; flight: Flight }
  /** The call's own client left, or its request's deadline passed, while it waited: its answer. */
  | { kind: 'stopped'; outcome: AttemptFailure }
  /** Asks the provider, and no other call waits for it. */
  | { kind: 'alone' };

/**
 * For a call that missed: waits for the answer of an identical one already with the provider on this
 * node, or leads the flight the next ones wait for. Only a JSON request whose answer the cache would keep
 * takes part: a stream never waits (its first bytes would wait for another's last), nor does a forced
 * refresh (it asks the provider whatever is kept). A flight that lands empty leaves the call alone; so
 * does finding none, when the call is not to `lead` one. A call waits no longer than it would have waited
 * for the provider: its client leaving or its request's deadline passing stops it (`stopped`), with the
 * failure a call of its own would have had.
 */
export async function flightTurn(
  call: TargetCall,
  key: string,
  maxAgeMs: number,
  lead = true,
): Promise<FlightTurn> {
  if (call.sink || call.run.call.ctx.cacheForceRefresh || !(maxAgeMs > 0)) return { kind: 'alone' };
  const flights = call.run.deps.routing.cacheFlights;
  const landing = flights.landing(key);
  if (!landing) return lead ? { kind: 'lead', flight: flights.start(key) } : { kind: 'alone' };
  const waited = await untilStopped(call, landing);
  if (waited.kind === 'stopped') return waited;
  const { landed } = waited;
  if (landed && answersCall(call, landed.answer) && withinMaxAge(landed.answer, maxAgeMs)) {
    return { kind: 'landed', landed };
  }
  return { kind: 'alone' };
}

/**
 * Waits for `landing` while the call's client is there and its request's deadline has not passed; the
 * call's own failure when either comes first (as the attempt and the deadline step would answer it).
 */
function untilStopped(
  call: TargetCall,
  landing: Promise<Landed | undefined>,
): Promise<{ kind: 'waited'; landed: Landed | undefined } | { kind: 'stopped'; outcome: AttemptFailure }> {
  const { run } = call;
  const { signal } = run.call.ctx;
  const clientGone = () =>
    ({
      kind: 'stopped',
      outcome: gatewayFailure(new GatewayError('request_timeout', 'The client went away'), 'client_gone'),
    }) as const;
  const timedOut = () =>
    ({
      kind: 'stopped',
      outcome: gatewayFailure(
        new GatewayError('request_timeout', 'The request ran out of time before an answer'),
        'timeout',
      ),
    }) as const;
  if (signal.aborted) return Promise.resolve(clientGone());
  return new Promise((settle) => {
    const onAbort = () => {
      done();
      settle(clientGone());
    };
    const timer = setTimeout(
      () => {
        done();
        settle(timedOut());
      },
      Math.min(Math.max(0, run.deadline - performance.now()), MAX_TIMER_MS),
    );
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    landing.then(
      (landed) => {
        done();
        settle({ kind: 'waited', landed });
      },
      () => {
        done();
        settle({ kind: 'waited', landed: undefined });
      },
    );
  });
}

/**
 * Calls on, a stream's chunks kept on the way (up to `maxBytes`), for the complete answer a cache could keep;
 * a flight the call leads lands empty when the call throws.
 */
export async function callForAnswer(
  next: TargetHandler,
  call: TargetCall,
  maxBytes: number,
  flight: Flight | undefined,
): Promise<{ outcome: AttemptOutcome; answer: CachedAnswer | undefined }> {
  const tee = call.sink ? new CacheTee(call.sink, maxBytes) : undefined;
  try {
    const outcome = await next(tee ? { ...call, sink: tee } : call);
    return { outcome, answer: completeAnswer(outcome, tee?.chunks) };
  } catch (err) {
    flight?.land(undefined);
    throw err;
  }
}

/** Calls on and keeps the complete answer; a flight it leads lands with what is kept, or empty. */
async function callAndKeep(
  next: TargetHandler,
  call: TargetCall,
  plan: CachePlan,
  flight: Flight | undefined,
): Promise<AttemptOutcome> {
  const { outcome, answer } = await callForAnswer(
    next,
    call,
    call.run.deps.routing.cache.maxEntryBytes,
    flight,
  );
  if (!answer) {
    flight?.land(undefined);
    return outcome;
  }
  await keepWhenPassed(
    call,
    answer,
    async (kept) => {
      flight?.land(kept);
      await storeInCache(call, plan, kept);
      flight?.end();
    },
    () => flight?.land(undefined),
  );
  return outcome;
}

/**
 * Keeps a complete answer once the call's output checks have passed it (at once when its config has no
 * hooks): an answer they deny is never kept, so the retry or fallback its 446 asks for calls the provider
 * again. What is kept is what the client got: a redacting check's rewrite replaces the provider's text, so
 * the values it redacted are never stored. The checks run again on every answer the cache gives.
 */
export function keepWhenPassed(
  call: TargetCall,
  answer: CachedAnswer,
  keep: (answer: CachedAnswer) => Promise<void> | void,
  dropped?: () => void,
): Promise<void> | void {
  if (!call.outputChecks) return keep(answer);
  call.outputChecks.whenPassed(
    (rewrite) => keep(rewrite ? rewrittenAnswer(rewrite, answer.storedAt) : answer),
    dropped,
  );
}

function rewrittenAnswer(rewrite: CheckedRewrite, storedAt: number): CachedAnswer {
  return rewrite.kind === 'json'
    ? { kind: 'json', body: rewrite.body, storedAt }
    : { kind: 'stream', chunks: rewrite.chunks.map((chunk) => JSON.stringify(chunk)), storedAt };
}

/** Answers from the cache when it holds this request's answer; undefined on a miss. */
async function answerFromCache(call: TargetCall, plan: CachePlan): Promise<AttemptSuccess | undefined> {
  if (plan.status === 'REFRESH') return undefined;
  const { run } = call;
  let cached: CachedAnswer | undefined;
  try {
    cached = await run.deps.routing.cache.get(plan.entryKey);
  } catch (err) {
    // A cache that cannot be read is a miss, never a failed request.
    run.deps.logger.warn({ err }, 'response cache read failed');
    return undefined;
  }
  if (!cached || !answersCall(call, cached) || !withinMaxAge(cached, plan.maxAgeMs)) return undefined;
  return replayAnswer(call, cached, () => (run.call.state.cacheStatus = 'HIT'));
}

/**
 * Whether a stored answer is young enough for the call's `max_age`: an entry lives as long as the config
 * that stored it said, but answers only a request whose own `max_age` it is within, so a lowered
 * `max_age` holds at once rather than once the older entries expire.
 */
export function withinMaxAge(cached: CachedAnswer, maxAgeMs: number, now: number = Date.now()): boolean {
  return now - cached.storedAt < maxAgeMs;
}

/** Whether a stored answer is of the form the call asks (a stream for a stream, JSON for JSON). */
export function answersCall(call: TargetCall, cached: CachedAnswer): boolean {
  return cached.kind === 'json' ? !call.sink : call.sink !== undefined;
}

/**
 * Answers the call with a stored answer of its form (answersCall). `beforeFirstByte` runs before anything
 * is sent, so the status it sets goes out with the response headers.
 */
export async function replayAnswer(
  call: TargetCall,
  cached: CachedAnswer,
  beforeFirstByte: () => void,
): Promise<AttemptSuccess> {
  beforeFirstByte();
  if (cached.kind === 'json') {
    const body = cached.body as { model?: string };
    return hit(body, body.model);
  }
  const { sink } = call;
  if (!sink) throw new Error('a stored stream replayed to a call that asked for JSON');
  let model: string | undefined;
  for (const text of cached.chunks) {
    const chunk = JSON.parse(text) as AnswerChunk;
    model ??= chunkModel(chunk);
    const pending = sink.chunk(chunk, text);
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

/**
 * The answer to keep of an outcome: a successful JSON body, or a stream whose every payload (`chunks`)
 * came from one call; undefined for anything else.
 */
export function completeAnswer(
  outcome: AttemptOutcome,
  chunks: string[] | undefined,
): CachedAnswer | undefined {
  if (!outcome.ok || outcome.status < 200 || outcome.status >= 300) return undefined;
  if (outcome.streamed) {
    return chunks && chunks.length > 0 ? { kind: 'stream', chunks, storedAt: Date.now() } : undefined;
  }
  return outcome.body === undefined ? undefined : { kind: 'json', body: outcome.body, storedAt: Date.now() };
}

/** Stores a complete answer. */
async function storeInCache(call: TargetCall, plan: CachePlan, answer: CachedAnswer): Promise<void> {
  try {
    await call.run.deps.routing.cache.set(plan.entryKey, answer, plan.maxAgeMs);
  } catch (err) {
    call.run.deps.logger.warn({ err }, 'response cache write failed');
  }
}
