/**
 * The shapes of the pipeline that refer to one another — the gateway's dependencies, the routing runtime
 * and its step chain, a call's walk of the target tree, and what observers are told — in one module, so
 * that the modules working with them import each other's values without import cycles. Their helpers live
 * beside what they serve: routing/route-types.ts, steps/target-step.ts, routing/runtime.ts, observer.ts.
 */
import type { BlobStore } from '../store/blob-store.js';
import type { Logger } from 'pino';
import type { GatewayError, ProviderError } from '../core/errors.js';
import type { Usage } from '../core/openai-types.js';
import type { CheckServices } from '../hooks/check-types.js';
import type { LogWriter } from '../observability/log-writer.js';
import type { RequestBodies, UpstreamRequest } from '../providers/types.js';
import type { Settings } from '../settings.js';
import type { Breaker, SharedState } from '../state/index.js';
import type { Store } from '../store/types.js';
import type { AttemptOutcome } from './attempt.js';
import type { ResponseCache } from './cache/index.js';
import type { InFlightAnswers } from './cache/in-flight.js';
import type { SemanticCache } from './cache/semantic/semantic-cache.js';
import type { CallContext, PromptRef } from './call-context.js';
import type { TargetConfig } from './config/index.js';
import type { DeliveredStream } from './delivered-stream.js';
import type { HookRunLog } from './hooks/hook-result-types.js';
import type { RecordContext } from './log-record.js';
import type { Lookups } from './lookups.js';
import type { ReplayableBody } from './passthrough/replayable-body.js';
import type { ResolvedTarget } from './resolve-target.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { PriceTable } from '../observability/pricing/price-table.js';
import type { AnswerChunk, CallSink } from './sink.js';
import type { UpstreamClient } from './upstream.js';

/** Everything the pipeline and the routes need, built once in gateway-server.ts. */
export interface GatewayDeps {
  settings: Settings;
  store: Store;
  lookups: Lookups;
  upstream: UpstreamClient;
  logWriter: LogWriter;
  logger: Logger;
  /** Fast shared state: process memory, or Redis with REDIS_URL. */
  state: SharedState;
  /** Breakers, the response cache and the target step chain. */
  routing: RoutingRuntime;
  /** See every call when it ends: the log (log-observer.ts), metrics (metrics-observer.ts), later traces. */
  observers: CallObserver[];
  /** List prices per provider and model, for every call's cost (observability/pricing/). */
  prices: PriceTable;
  /** The Prometheus registry `GET /metrics` serves; absent with GATEWAY_METRICS=off. */
  metrics: GatewayMetrics | undefined;
  /** What hook checks may reach outside the process (webhooks, URL probes, a judge model). */
  hooks: HookRuntime;
  /** File contents (uploads, batch inputs and outputs): a local directory, or S3-compatible storage. */
  blobs: BlobStore;
}

/** The outbound services of hook checks (hooks/check-services.ts), built once per gateway. */
export interface HookRuntime {
  /** The services for the checks of one call: a judge is asked under the call's tenant and trace. */
  servicesFor(run: RouteRun, model: string | undefined): CheckServices;
  /** As UpstreamClient.close: the checks' calls still running after `timeoutMs` are ended. */
  close(timeoutMs?: number): Promise<void>;
}

export interface RoutingRuntime {
  /** The circuit breakers, failing open when their state cannot be reached (routing/fail-open-breaker.ts). */
  breaker: GuardedBreaker;
  /** The simple response cache (shared across nodes when the state is Redis). */
  cache: ResponseCache;
  /** Identical cacheable requests being answered on this node, which the others wait for. */
  cacheFlights: InFlightAnswers;
  /** [0, 1). */
  random: () => number;
  /** The steps every target of a model call runs, composed around the call (../steps/). */
  modelChain: TargetHandler;
  /** The same for a pass-through call: no cache, no continuation; the call relays the provider's answer. */
  passthroughChain: TargetHandler;
  /** Rate-limit policies' counters, fail mode and stats (rate-limits/rate-limiter.ts). */
  rateLimits: RateLimits;
  /** The semantic cache's entries and how it embeds a request (cache/semantic/). */
  semantic: SemanticCacheRuntime;
}

/** Where the semantic cache's embeddings are asked: a virtual key or a stored config, and the model. */
export type EmbeddingTarget = ({ virtual_key: string; config?: undefined } | { config: string }) & {
  model: string;
};

/** Embeds a text through the gateway's own routing, under the call's tenant and trace; the embedding
 * call is abandoned (and the promise rejects) after `timeoutMs`. */
export type SemanticEmbedder = (
  run: RouteRun,
  target: EmbeddingTarget,
  text: string,
  timeoutMs: number,
) => Promise<number[]>;

export interface SemanticCacheRuntime {
  cache: SemanticCache;
  embed: SemanticEmbedder;
}

/** A breaker that never throws: state it cannot read or write is counted in `stats` instead. */
export interface GuardedBreaker extends Breaker {
  readonly stats: BreakerStateErrors;
}

/** Failed reads (the call went through unchecked) and writes (an outcome not counted) of breaker state. */
export interface BreakerStateErrors {
  read: number;
  write: number;
}

export type RateLimitFailMode = 'open' | 'closed';

/** Counts since start, for a metrics endpoint to read (`deps.routing.rateLimits.stats`). */
export interface RateLimitStats {
  /** Calls checked against at least one policy. */
  checked: number;
  /** Calls refused with 429. */
  refused: number;
  /** Checks the counters could not answer (unreachable, or slower than the timeout)… */
  unavailable: number;
  /** …of which let through unchecked (fail mode `open`)… */
  admittedUnchecked: number;
  /** …and refused with 503 (fail mode `closed`). */
  refusedUnavailable: number;
  /** Token settlements that could not be written (the reservation stands). */
  settleFailures: number;
}

/** Token reservations a call holds, settled when its answer's usage is known. */
export interface RateLimitAdmission {
  reservations: Array<{ key: string; periodMs: number; limit: number; reserved: number }>;
  /** The characters of a model call's input its reservation counted, which an answer without usage is
   * settled by; undefined for a pass-through (rate-limits/token-estimate.ts). */
  inputLength: number | undefined;
}

/** The rate-limit policies at work (the step steps/rate-limit-step.ts calls them). */
export interface RateLimits {
  readonly stats: RateLimitStats;
  readonly failMode: RateLimitFailMode;
  /** Charges the counters of every policy the target call meets; resolves with the token reservations
   * to settle (undefined when none), or throws the 429 (or, closed and unreachable, the 503). Undefined
   * at once, without a promise, when it is already known that no policy can meet the call. */
  admit(call: TargetCall): Promise<RateLimitAdmission | undefined> | undefined;
  /** Moves each reservation to `used` tokens; `undefined` keeps the reservations as they are. */
  settle(admission: RateLimitAdmission, used: number | undefined): Promise<void>;
  /** Gives back the room this node holds on shared counters (leases); before the shared state closes. */
  close(): Promise<void>;
}

/** What the response headers report; updated as attempts run (streams send headers mid-route). */
export interface RouteState {
  targetPath: string | null;
  provider: string | null;
  /** Retries made during the request, on every target together (moving to a fallback is not a retry). */
  retryCount: number;
  /** Calls of a provider begun during the request (each target's, each retry; a fan-out's calls as one): a
   * failure once there is one may come after a provider answered, and paid for, the call. */
  providerCalls: number;
  cacheStatus: string | null;
  /** How close the request came to the semantic cache's nearest entry (x-gateway-cache-similarity). */
  cacheSimilarity: number | null;
  /** The semantic cache entry that answered, or that the answer is stored as (x-gateway-cache-entry-id). */
  cacheEntryId: string | null;
  /** The status a stream goes out with when not 200: 246 when a hook failed without denying. */
  streamStatus: number | null;
  /** The `x-ratelimit-*` headers when rate-limit policies govern the call (rate-limits/). */
  rateLimitHeaders: Record<string, string> | null;
  /** What the call cost in US dollars, once it has ended (call-cost.ts); null while unknown. */
  cost: number | null;
  /** The tag of the provider account a Responses call is being answered by natively, null when it is
   * translated (steps/responses-step.ts): the gateway's ids of its reasoning items carry it
   * (responses/reasoning-accounts.ts). */
  responsesAccount: string | null;
  /** The index, in the input a Responses call carries (its stored conversation first), of the client's
   * first input item, for an error about an item to name it as the client did (responses/item-paths.ts);
   * null when unknown, and for other calls. */
  responsesInputOffset: number | null;
}

/** The body each kind of routed call carries. A pass-through has none the pipeline reads (its bytes travel in
 * `passthrough`); an empty object stands in, so records and steps read every call's body alike. */
interface RoutedBodies extends RequestBodies {
  passthrough: Record<string, undefined>;
}

export type RoutedKind = keyof RoutedBodies;

/** A routed call's operation and body, told apart by `endpoint`; with K, those of kind K. */
export type RoutedRequest<K extends RoutedKind = RoutedKind> = {
  [P in K]: { endpoint: P; body: RoutedBodies[P] };
}[K];

/** A pass-through call: the provider's own path and body, relayed without translation. */
export interface PassthroughCall {
  method: UpstreamRequest['method'];
  /** The path after `/v1`, with its query string. */
  path: string;
  /** Client headers that may travel to the provider (hop-by-hop, x-gateway-* and credentials removed). */
  headers: Record<string, string>;
  body: ReplayableBody | undefined;
}

/** A call as the router sees it: its operation and body (the validated body as sent to the provider, before
 * a target's override_params), and how it is run. */
export type RoutedCall<K extends RoutedKind = RoutedKind> = RoutedRequest<K> & {
  ctx: CallContext;
  /** The chain of steps every target of this call runs (model calls and pass-through differ). */
  chain: TargetHandler;
  /** Pass-through only. */
  passthrough?: PassthroughCall;
  stream: boolean;
  /** The JSON text the client sent `body` as, kept by the HTTP layer's parser (`ModelCall.bodyText`); `body`
   * may carry the stream_options that ask a stream's usage besides. A target sent `body` itself sizes a
   * fan-out by it, without measuring the body. */
  bodyText?: string;
  /** Streams only: the answer as delivered so far, in front of the caller's sink. */
  sink: DeliveredStream | undefined;
  state: RouteState;
};

/** Everything that happened for one target: a call, a breaker skip, or a cache answer. */
export interface AttemptRecord {
  path: string;
  /** Null for a target that could not be resolved (an unknown virtual key or provider). */
  provider: string | null;
  model: string | undefined;
  body: Record<string, unknown>;
  outcome: AttemptOutcome;
  /** performance.now() at start and end. */
  started: number;
  ended: number;
  retry: number;
  cacheStatus: string | null;
  /** The stored prompt the target sent: its `prompt_id` target's, else the call's; none outside prompts. */
  prompt: PromptRef | undefined;
  /** Its span under the call's: the same in its log record and its trace span. */
  spanId: string;
}

/** The state of one request's walk through the tree. */
export interface RouteRun {
  deps: GatewayDeps;
  call: RoutedCall;
  /** performance.now() after which no new call starts and no retry waits (the request's deadline). */
  deadline: number;
  /** The last failed target, whatever it was. */
  lastFailure: NodeResult | undefined;
  /** Every call, breaker skip and cache answer so far, in order. */
  attempts: AttemptRecord[];
  /** The hooks run for the answering target, when its config has any (hooks/target-hooks.ts). */
  hooks: HookRunLog | undefined;
}

export interface NodeResult {
  outcome: AttemptOutcome;
  resolved: ResolvedTarget | undefined;
  /** The body sent to the target (override_params applied; a continuation when one was needed). */
  requestBody: Record<string, unknown>;
}

/** One call of one target, as the steps see it. Steps pass it on, or a copy with fields replaced. Its
 * `endpoint` is the routed call's, beside the body for the target: the client's with override_params
 * applied (a continuation's later). */
export type TargetCall<K extends RoutedKind = RoutedKind> = RoutedRequest<K> & TargetCallFields;

export interface TargetCallFields {
  run: RouteRun;
  /** The effective config node (parent settings inherited) and its path, e.g. `targets[1]`. */
  node: TargetConfig;
  path: string;
  resolved: ResolvedTarget;
  /** The model the target is called with. */
  model: string | undefined;
  /** Where the target is reached, without secrets (custom host, region…): part of breaker and cache keys. */
  address: string | undefined;
  /** Streams only: where this call's chunks go. */
  sink: CallSink | undefined;
  /** 0 for the first call to this target, 1, 2… for its retries. */
  retry: number;
  /** Set by the hooks step when the target's config has hooks: the answer's passage through its output
   * checks, which the steps inside it that keep answers (the caches) wait for. */
  outputChecks?: OutputChecks;
}

/**
 * An answer's passage through the output checks of its target's hooks (hooks/target-hooks.ts). A step
 * inside the hooks that keeps answers keeps one only once the checks have passed it, as the client got
 * it, and never one they denied: a denied answer kept would answer the retry or fallback its 446 asks
 * for, and every later equal request.
 */
export interface OutputChecks {
  /** Runs `keep` once the answer has passed, with the rewrite a check made of it (undefined: as it came);
   * never when it was denied or the call failed: `dropped` runs then, once the checks have ended. The answer
   * goes out once `keep` has settled. */
  whenPassed(keep: (rewrite: CheckedRewrite | undefined) => Promise<void> | void, dropped?: () => void): void;
}

/** An answer as a rewriting output check (`default.pii` with `redact`) left it: a JSON body (without
 * `hook_results`), or a stream's chunks. */
export type CheckedRewrite =
  { kind: 'json'; body: Record<string, unknown> } | { kind: 'stream'; chunks: readonly AnswerChunk[] };

export type TargetHandler = (call: TargetCall) => Promise<AttemptOutcome>;
export type TargetStep = (next: TargetHandler) => TargetHandler;

/**
 * What a summary needs of the call's context (what its log record takes, and how the call came in); a call
 * refused before its config was read has only this.
 */
export type SummaryContext = RecordContext &
  Pick<CallContext, 'signal' | 'method' | 'url' | 'runAgainIfCut' | 'withinSpanId'>;

export interface CallSummary {
  ctx: SummaryContext;
  /** The operation (`chat`, `completions`, `embeddings`, `passthrough`…). */
  endpoint: string;
  stream: boolean;
  state: RouteState;
  /** The status the call is recorded with (499 when the client left). */
  status: number;
  model: string | null;
  usage: Usage | undefined;
  ttfbMs: number | null;
  /** performance.now() when the answer had gone out (or failed): async hooks may run on after it. */
  endedAt: number;
  /** On failure. */
  error: GatewayError | ProviderError | undefined;
  /** Stream chunks skipped as malformed on the answering call. */
  malformedChunks: number;
  /** The body sent to the answering target, and what the client got (bodies as the log keeps them). */
  requestBody: unknown;
  responseBody: unknown;
  /** The exact JSON text of `responseBody`, when it came as it is from the upstream. */
  responseText: string | undefined;
  /** The JSON text `requestBody` was parsed from, when it is the client's body as it came. */
  requestText?: string;
  attempts: readonly AttemptRecord[];
  /** The hooks' results and feedback, when the config has hooks. */
  hooks: HookRunLog['results'] | undefined;
  /** `hooks` as the answer carried them, when that text is all of them (no async hook). */
  hooksText: string | undefined;
  /** The hook runs of every target and attempt that a call the gateway made was traced under (a judge's):
   * the trace writes their spans, whichever target answered. Absent without any. */
  tracedHooks?: HookRunLog['traced'];
}

export interface CallObserver {
  callEnded(summary: CallSummary): void;
  /**
   * A failure its caller holds back to run the call again (CallSink.heldBack: a rate-limit refusal a batch
   * line or a background response waits out, or a batch line's run the gateway failed before any provider
   * answered, given back to run again): no end of the call, so no record of it, but measured and traced
   * (a waited-out refusal marked held back, a failed run as the failure it is), so that what a job went
   * through is seen. Observers that only record leave it out.
   */
  callHeldBack?(summary: CallSummary): void;
}
