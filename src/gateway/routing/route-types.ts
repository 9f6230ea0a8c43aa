/** The shapes shared by the router, the target steps and the pipeline: one request's walk of the tree. */
import type { ModelRequest, RequestBodies, UpstreamRequest } from '../../providers/types.js';
import type { ReplayableBody } from '../passthrough/replayable-body.js';
import type { TargetHandler } from '../steps/target-step.js';
import type { AttemptOutcome } from '../attempt.js';
import type { CallContext } from '../call-context.js';
import type { DeliveredStream } from '../delivered-stream.js';
import type { GatewayDeps } from '../deps.js';
import type { ResolvedTarget } from '../resolve-target.js';
import type { RoutingRuntime } from './runtime.js';

/** What the response headers report; updated as attempts run (streams send headers mid-route). */
export interface RouteState {
  targetPath: string | null;
  provider: string | null;
  /** Retries made during the request, on every target together (moving to a fallback is not a retry). */
  retryCount: number;
  cacheStatus: string | null;
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

/** The operation and body of a model call; the steps that only model calls run (cache, continuation, the
 * call itself) ask this, and a pass-through never reaches them. */
export function modelRequestOf(call: RoutedRequest): ModelRequest {
  if (call.endpoint === 'passthrough') throw new Error('a pass-through call reached a model-call step');
  return call;
}

export function newRouteState(): RouteState {
  return { targetPath: null, provider: null, retryCount: 0, cacheStatus: null };
}

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
export type RoutedCall = RoutedRequest & {
  ctx: CallContext;
  /** The chain of steps every target of this call runs (model calls and pass-through differ). */
  chain: TargetHandler;
  /** Pass-through only. */
  passthrough?: PassthroughCall;
  stream: boolean;
  /** Streams only: the answer as delivered so far, in front of the caller's sink. */
  sink: DeliveredStream | undefined;
  state: RouteState;
};

/** Everything that happened for one target: a call, a breaker skip, or a cache answer. */
export interface AttemptRecord {
  path: string;
  provider: string;
  model: string | undefined;
  body: Record<string, unknown>;
  outcome: AttemptOutcome;
  /** performance.now() at start and end. */
  started: number;
  ended: number;
  retry: number;
  cacheStatus: string | null;
}

/** The state of one request's walk through the tree. */
export interface RouteRun {
  deps: GatewayDeps;
  call: RoutedCall;
  runtime: RoutingRuntime;
  /** performance.now() after which no new call starts and no retry waits (the request's deadline). */
  deadline: number;
  /** The last failed target, whatever it was. */
  lastFailure: NodeResult | undefined;
  /** Every call, breaker skip and cache answer so far, in order. */
  attempts: AttemptRecord[];
}

export interface NodeResult {
  outcome: AttemptOutcome;
  resolved: ResolvedTarget | undefined;
  /** The body sent to the target (override_params applied; a continuation when one was needed). */
  requestBody: Record<string, unknown>;
}

/** Notes one call, breaker skip or cache answer of the walk. */
export function recordAttempt(run: RouteRun, record: Omit<AttemptRecord, 'ended' | 'cacheStatus'>): void {
  run.attempts.push({ ...record, ended: performance.now(), cacheStatus: run.call.state.cacheStatus });
}
