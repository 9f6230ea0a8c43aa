/**
 * The semantic cache in front of a target (`cache.mode: semantic`, docs/cache.md), for requests whose
 * last turn it can compare by meaning (cache/semantic/semantic-key.ts; the cache step serves the others
 * as the simple cache does). Within the request's partition, an entry stored by an equal request answers
 * first (`HIT`, similarity 1); otherwise the request is embedded through the gateway's own routing and
 * the nearest entry answers when its cosine similarity reaches the threshold (`SEMANTIC_HIT`). Else the
 * call goes on (`SEMANTIC_MISS`, or `REFRESH` when forced: its entry then replaces those that would have
 * answered it) and its complete answer is stored with the request's vector, once the output checks have passed it (as the simple cache keeps one: keepWhenPassed). The nearest similarity is reported in both cases. An embedding that fails, or a
 * cache that cannot be read or written, costs the cache and never the request. A JSON request equal to
 * one already with the provider on this node waits for its answer and is answered exactly (`HIT`), as
 * in the cache step (flightTurn).
 */
import { randomUUID } from 'node:crypto';
import { targetStrictCompat } from '../call-context.js';
import type { AttemptOutcome } from '../attempt.js';
import { maxAgeMs, parseAnswer, serializeAnswer, type CachedAnswer } from '../cache/response-cache.js';
import { DEFAULT_SHARED_MAX_ENTRY_BYTES } from '../cache/shared-response-cache.js';
import { partitionKey, semanticRequestOf, type SemanticRequest } from '../cache/semantic/semantic-key.js';
import type { SemanticLookupResult } from '../cache/semantic/semantic-cache.js';
import { unitVector } from '../cache/semantic/vector-index.js';
import type { Flight, Landed } from '../cache/in-flight.js';
import {
  answersCall,
  callForAnswer,
  exactKeyOf,
  flightTurn,
  keepWhenPassed,
  recordCacheAnswer,
  replayAnswer,
} from './cache-step.js';
import type { TargetCall, TargetHandler, TargetStep } from './target-step.js';
import { continuesAStream } from './continuation-step.js';
import { forwardedHeaders } from '../forwarded-headers.js';
import { embeddingTargetOf, type SemanticCacheConfig } from './semantic-embedding-target.js';

/** The largest answer an entry keeps, bytes of its stored text: as the simple cache's shared store keeps. */
export const MAX_ANSWER_BYTES = DEFAULT_SHARED_MAX_ENTRY_BYTES;

/** The least similarity that answers when the config sets none. */
export const DEFAULT_SIMILARITY_THRESHOLD = 0.95;

export const semanticCacheStep: TargetStep = (next) => (call) => {
  const cache = call.node.cache;
  if (cache?.mode !== 'semantic') return next(call);
  // A continuation is never cached (as in the cache step).
  if (continuesAStream(call)) return next(call);
  const request = semanticRequestOf(call.endpoint, call.body);
  if (!request) return next(call);
  return throughSemanticCache(next, call, cache, request);
};

/** Where a request's entry lives and how it is found: its partition, exact key and vector. */
interface SemanticPlan {
  workspaceId: string;
  partition: string;
  exactKey: string;
  maxAgeMs: number;
  threshold: number;
  /** The request's vector (unit length); undefined when the embedding failed (logged). */
  embed: () => Promise<Float32Array | undefined>;
}

function planSemantic(call: TargetCall, cache: SemanticCacheConfig, request: SemanticRequest): SemanticPlan {
  const { run } = call;
  const { deps } = run;
  const { ctx } = run.call;
  const target = embeddingTargetOf(call, cache);
  const workspaceId = ctx.apiKey.workspace_id;
  return {
    workspaceId,
    partition: partitionKey({
      workspaceId,
      namespace: ctx.cacheNamespace,
      endpoint: call.endpoint,
      provider: call.resolved.adapter.id,
      host: call.address,
      model: call.model ?? '',
      rest: request.rest,
      embedder: target,
      strict: targetStrictCompat(call.node, ctx),
      headers: ctx.clientHeaders,
      forwarded: forwardedHeaders(call.node, ctx, call.resolved),
      target: call.resolved.target,
    }),
    exactKey: exactKeyOf(call),
    maxAgeMs: maxAgeMs(cache),
    threshold: cache.similarity_threshold ?? DEFAULT_SIMILARITY_THRESHOLD,
    embed: async () => {
      try {
        // No more time than the target gives its own call, within the request's deadline.
        const timeoutMs = Math.min(
          call.node.request_timeout ?? deps.settings.defaultRequestTimeoutMs,
          run.deadline - performance.now(),
        );
        return unitVector(
          await deps.routing.semantic.embed(run, target, request.text, Math.max(1, timeoutMs)),
        );
      } catch (err) {
        deps.logger.warn({ err }, 'semantic cache: the request could not be embedded');
        return undefined;
      }
    },
  };
}

async function throughSemanticCache(
  next: TargetHandler,
  call: TargetCall,
  cache: SemanticCacheConfig,
  request: SemanticRequest,
): Promise<AttemptOutcome> {
  const { state } = call.run.call;
  const started = performance.now();
  const plan = planSemantic(call, cache, request);
  // An equal request already with the provider answers this one exactly once it has its answer: nothing
  // to look up or embed meanwhile.
  const early = await flightTurn(call, plan.exactKey, plan.maxAgeMs, false);
  if (early.kind === 'stopped') return early.outcome;
  if (early.kind === 'landed') return answerLanded(call, early.landed, started);
  const found = await findEntry(call, plan);
  state.cacheSimilarity = found.kind === 'exact' ? 1 : (found.similarity ?? null);
  state.cacheEntryId = null;

  if (found.kind !== 'miss') {
    const cached = parseAnswer(found.entry.answer);
    // The partition holds the stream flag, so a stored answer is always of the asked form.
    if (cached && answersCall(call, cached)) {
      const { entry } = found;
      const status = found.kind === 'exact' ? 'HIT' : 'SEMANTIC_HIT';
      const answer = await replayAnswer(call, cached, () => {
        state.cacheStatus = status;
        state.cacheEntryId = entry.id;
      });
      recordCacheAnswer(call, answer, started);
      return answer;
    }
  }

  // One that went to the provider while this one looked (or the next ones wait for this one).
  const turn = await flightTurn(call, plan.exactKey, plan.maxAgeMs);
  if (turn.kind === 'stopped') return turn.outcome;
  if (turn.kind === 'landed') return answerLanded(call, turn.landed, started);
  const flight = turn.kind === 'lead' ? turn.flight : undefined;

  const vector = found.kind === 'miss' ? found.vector : undefined;
  const storable = vector !== undefined && plan.maxAgeMs > 0;
  // Named before the call, so the answer's headers can tell which entry it will be stored as.
  const id = `sc_${randomUUID()}`;
  if (storable) state.cacheEntryId = id;
  const { outcome, answer } = await callForAnswer(next, call, MAX_ANSWER_BYTES, flight);
  // An answer that is not kept is named by no entry (a failure, one the output checks denied).
  const dropped = () => {
    if (state.cacheEntryId === id) state.cacheEntryId = null;
    flight?.land(undefined);
  };
  if (answer && (storable || flight)) {
    keepWhenPassed(call, answer, (kept) => keep(call, plan, { id, vector, flight }, kept), dropped);
  } else dropped();
  return outcome;
}

/** Answers with the answer of an equal request that was in flight, as an exact match. */
async function answerLanded(call: TargetCall, landed: Landed, started: number): Promise<AttemptOutcome> {
  const { state } = call.run.call;
  const answer = await replayAnswer(call, landed.answer, () => {
    state.cacheStatus = 'HIT';
    state.cacheSimilarity = 1;
    state.cacheEntryId = landed.entryId ?? null;
  });
  recordCacheAnswer(call, answer, started);
  return answer;
}

/**
 * Keeps a passed answer: its entry is held at once and its row written after the answer has gone out (not
 * awaited); the requests waiting for it are given it, with the entry it is stored as.
 */
function keep(
  call: TargetCall,
  plan: SemanticPlan,
  entry: { id: string; vector: Float32Array | undefined; flight: Flight | undefined },
  answer: CachedAnswer,
): void {
  const { id, vector, flight } = entry;
  const storing = vector && plan.maxAgeMs > 0 ? storeEntry(call, plan, id, vector, answer) : undefined;
  // storeEntry lets go of the entry's name at once when it will not store the answer.
  flight?.land(answer, call.run.call.state.cacheEntryId === id ? id : undefined);
  void Promise.resolve(storing).finally(() => flight?.end());
}

/** The entry that answers, or a miss with the request's vector; a forced refresh looks nothing up. */
async function findEntry(call: TargetCall, plan: SemanticPlan): Promise<SemanticLookupResult> {
  const { deps } = call.run;
  const { ctx, state } = call.run.call;
  if (ctx.cacheForceRefresh) {
    state.cacheStatus = 'REFRESH';
    return { kind: 'miss', vector: await plan.embed(), similarity: undefined };
  }
  state.cacheStatus = 'SEMANTIC_MISS';
  try {
    return await deps.routing.semantic.cache.lookup(plan);
  } catch (err) {
    // A cache that cannot be read is a miss, never a failed request.
    deps.logger.warn({ err }, 'semantic cache read failed');
    return { kind: 'miss', vector: undefined, similarity: undefined };
  }
}

async function storeEntry(
  call: TargetCall,
  plan: SemanticPlan,
  id: string,
  vector: Float32Array,
  answer: CachedAnswer,
): Promise<void> {
  const { deps } = call.run;
  const text = serializeAnswer(answer);
  const { ctx, state } = call.run.call;
  // A row of tens of megabytes would be written, held and read back whole on every hit. (A JSON answer's
  // headers, not yet sent, then name no entry.)
  if (Buffer.byteLength(text, 'utf8') > MAX_ANSWER_BYTES) {
    if (state.cacheEntryId === id) state.cacheEntryId = null;
    return;
  }
  // A forced refresh replaces the entries that would have answered it, rather than standing beside them.
  const supersedeWithin = ctx.cacheForceRefresh ? plan.threshold : undefined;
  try {
    await deps.routing.semantic.cache.add(
      {
        id,
        workspace_id: plan.workspaceId,
        namespace: ctx.cacheNamespace ?? '',
        partition_key: plan.partition,
        exact_key: plan.exactKey,
        vector,
        answer: text,
        created_at_ms: answer.storedAt,
        expires_at_ms: answer.storedAt + plan.maxAgeMs,
      },
      supersedeWithin,
    );
  } catch (err) {
    deps.logger.warn({ err }, 'semantic cache write failed');
  }
}
