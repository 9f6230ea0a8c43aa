/**
 * Runs one list of hooks (before or after the call) over what it is shown, and says what came of it.
 *
 * - Hooks run in the order listed, so a mutator's rewrite is what the hooks after it see.
 * - A hook's checks run in parallel, or one after the other when it says `sequential` (then a rewrite by
 *   one check is what the next sees). A hook passes when every check passes.
 * - Every check has its own timeout (`timeout`, default 5 s) and fail mode (`on_error`, default pass): a
 *   check that throws or runs out of time counts as its `on_error` says, and its result says so.
 * - `not` inverts a check's verdict (never its error).
 * - An `async` hook starts with the others but is not waited on: its result goes to the log only.
 * - `on_fail` / `on_success` decide whether the hook denies the call and which feedback is recorded.
 *
 * A check that answers synchronously (most built-in ones) costs no timer and no extra promise, and a list
 * whose checks all do runs and returns its outcome without any promise.
 */
import { performance } from 'node:perf_hooks';
import type { CheckContext, CheckServices, CheckVerdict } from '../../hooks/check-types.js';
import type { AbortSignalLike } from '../../core/abort.js';
import type { CheckSpec, HookSpec } from '../config/index.js';
import type { CheckResult, HookResult, HookRunLog, TracedHookRun } from './hook-result-types.js';
import { withBody, type HookInput } from './hook-input.js';
import { newSpanId } from '../context.js';

export type { HookInput } from './hook-input.js';

type Json = Record<string, unknown>;

export interface HookEnv {
  services: CheckServices;
  /** The call's own abort (the client went away): every running check is aborted with it. */
  signal: AbortSignalLike;
  /** Where the promises of async hooks go; each resolves once its result is in `results`. */
  pending: Promise<unknown>[];
  /**
   * The call whose hooks these are: a hook run that a call the gateway made was traced under (a judge's) is
   * kept in its log as it stands when the hook ends (HookRunLog.traced), a retry or another target having
   * replaced the log the hook began with. Absent where no trace is kept of such runs.
   */
  call?: { readonly hooks: HookRunLog | undefined };
}

export interface HookListOutcome {
  /** Some hook (not async) failed. */
  failed: boolean;
  /** The first hook whose outcome denies the call. */
  denied: HookResult | undefined;
  /** The request (before) or answer (after) body as the mutators left it; undefined when untouched. */
  transformed: Json | undefined;
}

/**
 * Runs `hooks` over `input`, appending each result to `results` (async hooks' when they end). Settles
 * when every hook that is not async has ended: at once, without a promise, when every check answered at
 * once (most built-in checks do).
 */
export function runHooks(
  hooks: readonly HookSpec[],
  input: HookInput,
  env: HookEnv,
  results: HookResult[],
): HookListOutcome | Promise<HookListOutcome> {
  const outcome: HookListOutcome = { failed: false, denied: undefined, transformed: undefined };
  return runHooksFrom(0, hooks, input, env, results, outcome);
}

/** The hooks from index `from` on, shown `input`; waits only on a hook whose checks did not answer at once. */
function runHooksFrom(
  from: number,
  hooks: readonly HookSpec[],
  input: HookInput,
  env: HookEnv,
  results: HookResult[],
  outcome: HookListOutcome,
): HookListOutcome | Promise<HookListOutcome> {
  let current = input;
  for (let i = from; i < hooks.length; i++) {
    const hook = hooks[i];
    if (hook.async) {
      // Shown the input as it stands; its rewrites are never applied.
      env.pending.push(Promise.resolve(runHook(hook, current, env)).then((ran) => results.push(ran.result)));
      continue;
    }
    const running = runHook(hook, current, env);
    if (running instanceof Promise) {
      const shown = current;
      return running.then((ran) =>
        runHooksFrom(i + 1, hooks, recordRun(ran, shown, results, outcome), env, results, outcome),
      );
    }
    current = recordRun(running, current, results, outcome);
  }
  return outcome;
}

/** Adds a hook's run to the list's results and outcome; returns what the next hook is shown. */
function recordRun(
  ran: HookRun,
  input: HookInput,
  results: HookResult[],
  outcome: HookListOutcome,
): HookInput {
  results.push(ran.result);
  if (!ran.result.verdict) outcome.failed = true;
  if (ran.result.deny) outcome.denied ??= ran.result;
  if (!ran.transformed) return input;
  outcome.transformed = ran.transformed;
  return withBody(input, ran.transformed);
}

interface HookRun {
  result: HookResult;
  transformed: Json | undefined;
}

/** A hook's run: synchronous when every check of it answers at once. */
function runHook(hook: HookSpec, input: HookInput, env: HookEnv): HookRun | Promise<HookRun> {
  const started = performance.now();
  if (hook.sequential) return runSequentially(hook, input, env, started);
  const runs: Array<CheckRun | Promise<CheckRun>> = [];
  let waiting = false;
  // The first check's context holds the hook's span id, if one of its checks asks for it.
  let first: CheckCall | undefined;
  for (const check of hook.checks) {
    const ctx = new CheckCall(input, env.signal, first);
    first ??= ctx;
    const run = runCheck(check, ctx, env);
    if (run instanceof Promise) waiting = true;
    runs.push(run);
  }
  if (waiting) return Promise.all(runs).then((ran) => hookRun(hook, started, ran, env, first));
  return hookRun(hook, started, runs as CheckRun[], env, first);
}

/** Each check shown the input as the one before it left it (a rewrite is what the next check sees). */
async function runSequentially(
  hook: HookSpec,
  input: HookInput,
  env: HookEnv,
  started: number,
): Promise<HookRun> {
  const runs: CheckRun[] = [];
  let current = input;
  let first: CheckCall | undefined;
  for (const check of hook.checks) {
    const ctx = new CheckCall(current, env.signal, first);
    first ??= ctx;
    const ran = await runCheck(check, ctx, env);
    runs.push(ran);
    if (ran.transformed) current = withBody(current, ran.transformed);
  }
  return hookRun(hook, started, runs, env, first);
}

function hookRun(
  hook: HookSpec,
  started: number,
  runs: readonly CheckRun[],
  env: HookEnv,
  first: CheckCall | undefined,
): HookRun {
  const checks: CheckResult[] = [];
  let transformed: Json | undefined;
  for (const ran of runs) {
    checks.push(ran.result);
    // The last rewrite listed wins: in a sequential hook it holds the others; parallel checks each saw the
    // original (chain rewrites with `sequential`).
    if (ran.transformed) transformed = ran.transformed;
  }
  const verdict = checks.every((check) => check.verdict);
  const outcome = verdict ? hook.onSuccess : hook.onFail;
  const result: HookResult = {
    id: hook.id,
    type: hook.type,
    event: hook.event,
    verdict,
    deny: outcome.deny && !hook.async,
    async: hook.async,
    transformed: transformed !== undefined,
    feedback: outcome.feedback ?? null,
    execution_time: elapsed(started),
    checks,
  };
  const spanId = first?.drawnSpanId;
  if (spanId !== undefined) keepTraced(env, { result, spanId, started });
  return { result, transformed };
}

/**
 * Keeps a hook run that a call the gateway made was traced under in the call's current log (a retry or
 * another target may have replaced the one the hook began with), for the trace to write the hook's span
 * under the id that call names as its parent, whichever target answered.
 */
function keepTraced(env: HookEnv, traced: TracedHookRun): void {
  const log = env.call?.hooks;
  if (log) (log.traced ??= []).push(traced);
}

interface CheckRun {
  result: CheckResult;
  transformed: Json | undefined;
}

/**
 * What one check is shown. Its `signal` is made when the check first reads it: a check that answers at
 * once (every text check) never does, and an AbortController per check and call is not free. So is the
 * hook's span id (`hookSpanId`), drawn when a check first reads it and held by the hook's first check's
 * context, which the others name: a hook whose checks make no call of their own costs nothing for it.
 */
class CheckCall implements CheckContext {
  timedOut = false;
  /** When the check's timeout passes (performance.now()), set as it starts (runCheck). */
  deadline = Infinity;
  private stopped = false;
  private controller: AbortController | undefined;
  /** On the hook's first check's context: the hook's span id, once a check of it has read it. */
  private spanId: string | undefined;

  constructor(
    private readonly input: HookInput,
    private readonly callSignal: AbortSignalLike,
    /** The context of the hook's first check; undefined on that one. */
    private readonly first: CheckCall | undefined,
  ) {}

  get event(): HookInput['event'] {
    return this.input.event;
  }
  get requestType(): HookInput['requestType'] {
    return this.input.requestType;
  }
  get callType(): HookInput['callType'] {
    return this.input.callType;
  }
  get request(): HookInput['request'] {
    return this.input.request;
  }
  get response(): HookInput['response'] {
    return this.input.response;
  }
  get provider(): string {
    return this.input.provider;
  }
  get model(): string | undefined {
    return this.input.model;
  }
  get metadata(): Record<string, string> {
    return this.input.metadata;
  }
  get headers(): HookInput['headers'] {
    return this.input.headers;
  }
  get hookSpanId(): string {
    const first = this.first ?? this;
    return (first.spanId ??= newSpanId());
  }

  /** The hook's span id when one of its checks read it (asked on the first check's context). */
  get drawnSpanId(): string | undefined {
    return this.spanId;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.stopped || this.callSignal.aborted) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** Stops a check still running (its timeout passed, or the client went away). */
  abort(): void {
    this.stopped = true;
    this.controller?.abort();
  }
}

function runCheck(check: CheckSpec, ctx: CheckCall, env: HookEnv): CheckRun | Promise<CheckRun> {
  const started = performance.now();
  ctx.deadline = started + check.timeoutMs;
  let value: CheckVerdict | Promise<CheckVerdict>;
  try {
    value = check.definition.run(ctx, check.parameters, env.services);
  } catch (err) {
    return erred(check, started, errorMessage(err), false);
  }
  if (!(value instanceof Promise)) return verdictOf(check, started, value);
  return withTimeout(value, check, ctx, env.signal).then(
    (verdict) => verdictOf(check, started, verdict),
    (err: unknown) =>
      ctx.timedOut
        ? erred(check, started, `timed out after ${check.timeoutMs} ms`, true)
        : erred(check, started, errorMessage(err), false),
  );
}

/** Settles with the check, or rejects once its timeout passes or the call is aborted (aborting the check). */
function withTimeout(
  value: Promise<CheckVerdict>,
  check: CheckSpec,
  ctx: CheckCall,
  callSignal: AbortSignalLike,
): Promise<CheckVerdict> {
  return new Promise<CheckVerdict>((resolve, reject) => {
    const stop = (reason: Error) => {
      ctx.abort();
      reject(reason);
    };
    const onCallAbort = () => stop(new Error('the call was aborted'));
    const timer = setTimeout(() => {
      ctx.timedOut = true;
      stop(new Error(`timed out after ${check.timeoutMs} ms`));
    }, check.timeoutMs);
    if (callSignal.aborted) onCallAbort();
    callSignal.addEventListener('abort', onCallAbort, { once: true });
    const settle = () => {
      clearTimeout(timer);
      callSignal.removeEventListener('abort', onCallAbort);
    };
    value.then(
      (verdict) => {
        settle();
        resolve(verdict);
      },
      (err: unknown) => {
        settle();
        reject(err);
      },
    );
  });
}

function verdictOf(check: CheckSpec, started: number, value: CheckVerdict): CheckRun {
  return {
    result: {
      id: check.id,
      verdict: check.not ? !value.verdict : value.verdict,
      explanation: value.explanation ?? null,
      data: value.data ?? null,
      error: null,
      on_error: check.onError,
      execution_time: elapsed(started),
    },
    transformed: value.transformed,
  };
}

function erred(check: CheckSpec, started: number, message: string, timedOut: boolean): CheckRun {
  return {
    result: {
      id: check.id,
      verdict: check.onError === 'pass',
      explanation: `The check could not give a verdict (${message}); counted as ${check.onError === 'pass' ? 'passed' : 'failed'} (on_error: ${check.onError})`,
      data: null,
      error: { message, timed_out: timedOut },
      on_error: check.onError,
      execution_time: elapsed(started),
    },
    transformed: undefined,
  };
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}
