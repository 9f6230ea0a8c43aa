/**
 * Observers see every call when it ends — its outcome and the history of its walk (each call to a
 * target, each breaker skip, each cache answer) — and turn it into what they keep: the log records
 * (log-observer.ts); metrics and traces plug in here too (`GatewayDeps.observers`).
 */
import type { GatewayError, ProviderError } from '../core/errors.js';
import type { Usage } from '../core/openai-types.js';
import type { CallContext } from './call-context.js';
import type { AttemptRecord, RouteState } from './routing/route-types.js';

/** What a summary needs of the call's context; a call refused before its config was read has only this. */
export type SummaryContext = Pick<
  CallContext,
  | 'apiKey'
  | 'traceId'
  | 'spanId'
  | 'parentSpanId'
  | 'spanName'
  | 'startedAt'
  | 'startedAtMs'
  | 'metadata'
  | 'signal'
  | 'method'
  | 'url'
>;

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
  /** On failure. */
  error: GatewayError | ProviderError | undefined;
  /** Stream chunks skipped as malformed on the answering call. */
  malformedChunks: number;
  /** The body sent to the answering target, and what the client got (bodies as the log keeps them). */
  requestBody: unknown;
  responseBody: unknown;
  /** The exact JSON text of `responseBody`, when it came as it is from the upstream. */
  responseText: string | undefined;
  attempts: readonly AttemptRecord[];
}

export interface CallObserver {
  callEnded(summary: CallSummary): void;
}
