/**
 * What a hook run reports: to the client in `hook_results` (beside the answer, or in a 446 body) and in
 * the request's log record. Field names follow the seed's users' `hook_results` (snake_case), with
 * `explanation`, `on_error` and `transformed` added. Types only, so the pipeline's shared shapes may name
 * them without an import cycle.
 */
import type { HookEvent } from '../../hooks/check-types.js';

export interface CheckResult {
  id: string;
  /** true: passed (after `not`). A check that erred or timed out counts as its `on_error` says. */
  verdict: boolean;
  explanation: string | null;
  data: unknown;
  /** Why the check could not give a verdict (an exception, a timeout); null when it did. */
  error: { message: string; timed_out: boolean } | null;
  on_error: 'pass' | 'fail';
  /** Milliseconds. */
  execution_time: number;
}

export interface HookResult {
  id: string;
  type: 'guardrail' | 'mutator';
  event: HookEvent;
  /** true when every check passed. */
  verdict: boolean;
  /** This hook's outcome asked for the call to be denied. */
  deny: boolean;
  async: boolean;
  /** The hook rewrote the request (before) or the answer (after). */
  transformed: boolean;
  /** The `feedback` of `on_success` or `on_fail`, whichever applied. */
  feedback: { value?: number; weight?: number; metadata?: Record<string, unknown> } | null;
  /** Milliseconds. */
  execution_time: number;
  checks: CheckResult[];
}

/** Both lists as they travel: `hook_results` of an answer, a 446 body and a log record. */
export interface HookResults {
  before_request_hooks: HookResult[];
  after_request_hooks: HookResult[];
}

/** A call's hooks as the log keeps them: the results, and the async hooks still running. */
export interface HookRunLog {
  /** The path of the target these hooks ran for (`targets[0]`). */
  path: string;
  results: HookResults;
  /** Settles when every async hook of the call has finished (and its result is in `results`). */
  pending: Promise<unknown>[];
  /** The request as a mutator rewrote it (PII redacted): what the provider got, and what the log keeps. */
  requestBody: Record<string, unknown> | undefined;
  /** A JSON answer as the client got it but for `hook_results` (and its text, when it is the upstream's):
   * what the log keeps as the response body, the results having a column of their own. */
  answer: { sent: unknown; body: unknown; text: string | undefined } | undefined;
  /** `results` serialised for the answer, when the client was shown all of them (no async hook): the log
   * record keeps this text instead of serialising them again. */
  resultsText: string | undefined;
  /**
   * The call's hook runs that a call the gateway made was traced under (a judge's), every target's and
   * attempt's: made when the first is kept, and handed on to the log of the call's next target or attempt,
   * so that the call's last log holds them all (run-hooks.ts keeps them in the log current when they end).
   */
  traced: TracedHookRun[] | undefined;
}

/** A hook run whose span a call the gateway made for it was traced under (a judge's): the trace writes the
 * hook's span under that id, at the time it ran, whichever target answered. */
export interface TracedHookRun {
  result: HookResult;
  spanId: string;
  /** performance.now() when the hook began. */
  started: number;
}
