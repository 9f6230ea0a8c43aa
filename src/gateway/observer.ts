/**
 * Observers see every call when it ends — its outcome and the history of its walk (each call to a
 * target, each breaker skip, each cache answer) — and turn it into what they keep: the log records
 * (log-observer.ts); metrics and traces plug in here too (`GatewayDeps.observers`).
 */
export type { CallObserver, CallSummary, SummaryContext } from './pipeline-types.js';
