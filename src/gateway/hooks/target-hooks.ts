/**
 * A target's call with its config's hooks around it (installed by steps/hooks-step.ts).
 *
 * Before the call, the before-request hooks and input guardrails see the request: a denying failure
 * answers 446 and the provider is never called; a mutator's rewrite is what the provider gets. After it,
 * the after-request hooks and output guardrails see the answer: a denying failure withholds it (446); a
 * rewrite replaces it. Any failure that does not deny turns 200 into 246. `hook_results` go with the
 * answer (in a stream's first chunk) and into the call's log record (RouteRun.hooks). The steps inside
 * that keep the answer (the caches) are told once it has passed, as the client got it (PassedAnswer).
 *
 * Streams: the before-hooks run before the first byte. Output checks that may deny or rewrite hold the
 * stream back until they pass (HookedStream); the others see the whole text once it has gone out, without
 * keeping the stream from its end, and their results reach the log only. Embeddings run the before-hooks only.
 *
 * A stream that broke after its first byte is continued on the next target inside these hooks
 * (steps/index.ts): the before-hooks judge the client's request, as this target gets it, and the output
 * checks the whole answer, what the client already had followed by the continuation.
 */
import type { CallType, HookRequestType } from '../../hooks/check-types.js';
import { GatewayError } from '../../core/errors.js';
import { gatewayFailure, type AttemptOutcome, type AttemptSuccess } from '../attempt.js';
import { hooksOf, isStoredRef, type HookItem, type HookSpec } from '../config/index.js';
import type { TargetCall, TargetHandler } from '../pipeline-types.js';
import { modelRequestOf, recordAttempt } from '../routing/route-types.js';
import type { HookResult, HookResults, HookRunLog } from './hook-result-types.js';
import { spliceResults } from './answer-with-results.js';
import { HookedStream } from './hooked-stream.js';
import { HooksDeniedError } from './hooks-denied-error.js';
import { PassedAnswer } from './passed-answer.js';
import { shownAnswer, shownRequest, withBody, type HookInput } from './hook-input.js';
import { runHooks, type HookEnv } from './run-hooks.js';
import { resolveStoredGuardrail } from './stored-guardrail.js';
import { assembleAnswer, rewriteChunks, withoutSentText, withSentText } from './stream-answer.js';

type Json = Record<string, unknown>;

/** The status of an answer that went out although a hook failed without denying. */
export const HOOKS_FAILED_STATUS = 246;

/** Each endpoint's call type (check-types.ts CallType): the client's call, read from the routed call's
 * endpoint, so that a Messages or Responses call sent to its target as chat is still its own type. */
const CALL_TYPES = {
  chat: 'chatComplete',
  completions: 'complete',
  embeddings: 'embed',
  messages: 'messages',
  count_tokens: 'messagesCountTokens',
  responses: 'createModelResponse',
} as const satisfies Record<keyof typeof REQUEST_TYPES, CallType>;

const REQUEST_TYPES = {
  chat: 'chatComplete',
  completions: 'complete',
  embeddings: 'embed',
  // Anthropic's messages have the chat's shape where checks read them (role, content string or text parts).
  messages: 'chatComplete',
  count_tokens: 'chatComplete',
  // A Responses request's input items read like chat messages (role, content string or text parts).
  responses: 'chatComplete',
} as const satisfies Record<string, HookRequestType>;

/** The operations whose answers output checks read: OpenAI's chat and completions, and the Messages and
 * Responses answers a provider gave natively (an Anthropic Message, a Response: hooks/text.ts reads their
 * text). A call translated to chat is a chat call by then (steps/messages-step.ts, responses-step.ts). */
const ANSWER_CHECKED = new Set(['chat', 'completions', 'messages', 'responses']);

const NONE: readonly HookSpec[] = [];

export function callWithHooks(next: TargetHandler, call: TargetCall): Promise<AttemptOutcome> {
  const passed = new PassedAnswer();
  // However the call ends (denied, failed, thrown), the steps waiting on its answer learn of it.
  return hookedCall(next, call, passed).finally(() => passed.ended());
}

async function hookedCall(
  next: TargetHandler,
  call: TargetCall,
  passed: PassedAnswer,
): Promise<AttemptOutcome> {
  const { run } = call;
  const { ctx } = run.call;
  const request = modelRequestOf(call);
  const listed = hookLists(call, request.endpoint);
  const { before, after } = listed instanceof Promise ? await listed : listed;
  const results: HookResults = { before_request_hooks: [], after_request_hooks: [] };
  // What the client is shown: all the results, or (with an async hook) those that decided its answer.
  const clientView = before.some(isAsync) || after.some(isAsync) ? decidingResults : allResults;
  // The answering target's results are the call's; async hooks of an earlier attempt are still awaited,
  // and the hook runs of earlier attempts that a judge was traced under are still written in the trace.
  const log: HookRunLog = {
    path: call.path,
    results,
    pending: run.hooks?.pending ?? [],
    requestBody: undefined,
    answer: undefined,
    resultsText: undefined,
    traced: run.hooks?.traced,
  };
  run.hooks = log;
  const env: HookEnv = {
    services: run.deps.hooks.servicesFor(run, call.model),
    signal: ctx.signal,
    pending: log.pending,
    call: run,
  };
  const requestType = REQUEST_TYPES[request.endpoint];
  let body = request.body as Json;
  let input: HookInput = {
    event: 'beforeRequestHook',
    requestType,
    callType: CALL_TYPES[callEndpoint(run.call.endpoint, request.endpoint)],
    provider: call.resolved.adapter.id,
    model: call.model,
    metadata: ctx.metadata,
    headers: ctx.clientHeaders,
    request: shownRequest(requestType, body),
  };

  let failed = false;
  if (before.length > 0) {
    const started = performance.now();
    const running = runHooks(before, input, env, results.before_request_hooks);
    const ran = running instanceof Promise ? await running : running;
    if (ran.denied) {
      const denied = deniedOutcome(ran.denied, clientView(results), undefined);
      // Recorded as the hooks left it: what a redacting check took out stays out of the log.
      if (ran.transformed) log.requestBody = ran.transformed;
      recordAttempt(run, {
        path: call.path,
        provider: call.resolved.adapter.id,
        model: call.model,
        body: ran.transformed ?? body,
        outcome: denied,
        started,
        retry: call.retry,
      });
      return denied;
    }
    if (ran.transformed) {
      body = ran.transformed;
      log.requestBody = body;
      input = withBody(input, body);
      call = { ...call, body } as TargetCall;
    }
    failed = ran.failed;
  }

  // The caches inside keep the answer only once it has passed (`passed`), as the client got it.
  if (call.sink) {
    const state = run.call.state;
    // What the client already has of the answer, when this target is to continue it.
    const sent = run.call.sink && run.call.sink.written > 0 ? (run.call.sink.text.get(0) ?? '') : undefined;
    state.streamStatus = failed ? HOOKS_FAILED_STATUS : null;
    const hold = after.some(mayDenyOrRewrite);
    const sink = new HookedStream(call.sink, hold, after.length > 0, hold ? undefined : clientView(results));
    const outcome = await next({ ...call, sink, outputChecks: passed });
    // Another target may answer in its place, without these hooks' verdict.
    const forgetStatus = () => {
      if (run.call.sink?.written === 0) state.streamStatus = null;
    };
    if (!outcome.ok) {
      forgetStatus();
      return outcome;
    }
    if (after.length === 0) {
      await passed.passed(undefined);
      return withStatus(outcome, failed);
    }
    const chunks = sink.chunks;
    const assembled = assembleAnswer(chunks);
    const whole = sent === undefined ? assembled : withSentText(assembled, sent);
    const shown = answerInput(input, whole, outcome.status);
    const running = runHooks(after, shown, env, results.after_request_hooks);
    // Not held: the answer has gone out as it was and no verdict can change it. The stream ends now; the
    // results are recorded once the checks have ended, as an async hook's are.
    if (!hold) {
      if (running instanceof Promise) log.pending.push(running);
      await passed.passed(undefined);
      return withStatus(outcome, failed);
    }
    const ran = running instanceof Promise ? await running : running;
    if (ran.denied) {
      forgetStatus();
      return deniedOutcome(ran.denied, clientView(results), outcome);
    }
    failed ||= ran.failed;
    state.streamStatus = failed ? HOOKS_FAILED_STATUS : null;
    let delivered = chunks;
    if (ran.transformed) {
      const rewrite = sent === undefined ? ran.transformed : withoutSentText(ran.transformed, sent);
      if (!rewrite) return unjoinableRewrite(outcome);
      delivered = rewriteChunks(chunks, rewrite);
    }
    await sink.flush(delivered, clientView(results));
    await passed.passed(ran.transformed ? { kind: 'stream', chunks: delivered } : undefined);
    return withStatus(outcome, failed);
  }

  const outcome = await next({ ...call, outputChecks: passed });
  if (!outcome.ok) return outcome;
  let answer = outcome.body;
  if (after.length > 0 && isJson(answer)) {
    const running = runHooks(
      after,
      answerInput(input, answer, outcome.status),
      env,
      results.after_request_hooks,
    );
    const ran = running instanceof Promise ? await running : running;
    if (ran.denied) return deniedOutcome(ran.denied, clientView(results), outcome);
    if (ran.transformed) answer = ran.transformed;
    failed ||= ran.failed;
  }
  await passed.passed(answer !== outcome.body && isJson(answer) ? { kind: 'json', body: answer } : undefined);
  if (!isJson(answer)) return withStatus(outcome, failed);
  const shown = clientView(results);
  const sent = { ...answer, hook_results: shown };
  log.answer = { sent, body: answer, text: answer === outcome.body ? outcome.rawText : undefined };
  let rawText: string | undefined;
  if (answer === outcome.body && outcome.rawText !== undefined && !('hook_results' in answer)) {
    const shownText = JSON.stringify(shown);
    const spliced = spliceResults(outcome.rawText, shownText);
    rawText = spliced?.text;
    if (shown === results) log.resultsText = spliced?.resultsText ?? shownText;
  }
  return {
    ...outcome,
    status: failed && outcome.status === 200 ? HOOKS_FAILED_STATUS : outcome.status,
    body: sent,
    rawText,
  };
}

/** The endpoint whose call type checks are told: the client's, unless it has none (never for a model call). */
function callEndpoint(client: string, target: keyof typeof CALL_TYPES): keyof typeof CALL_TYPES {
  return client in CALL_TYPES ? (client as keyof typeof CALL_TYPES) : target;
}

/** What the after-request hooks are shown: the request as the provider got it, and the answer. */
function answerInput(before: HookInput, answer: Json, statusCode: number): HookInput {
  return {
    ...before,
    event: 'afterRequestHook',
    response: shownAnswer(before.requestType, answer, statusCode),
  };
}

interface CallHooks {
  before: readonly HookSpec[];
  after: readonly HookSpec[];
}

/**
 * The node's hook lists for this call (the after list only where answers are checked), stored guardrails
 * loaded: at once, without a promise, when the lists name none.
 */
function hookLists(call: TargetCall, endpoint: string): CallHooks | Promise<CallHooks> {
  const hooks = hooksOf(call.node, call.path ? `config.${call.path}` : 'config');
  const after = ANSWER_CHECKED.has(endpoint) ? hooks.after : NONE;
  if (!hooks.before.some(isStoredRef) && !after.some(isStoredRef)) {
    return { before: hooks.before as readonly HookSpec[], after: after as readonly HookSpec[] };
  }
  return withStoredGuardrails(hooks.before, after, call);
}

/** The lists with their stored guardrails loaded, the before list's first: its refusal is the one a call
 * naming a missing guardrail in both lists reports. */
async function withStoredGuardrails(
  before: readonly HookItem[],
  after: readonly HookItem[],
  call: TargetCall,
): Promise<CallHooks> {
  return { before: await resolved(before, call), after: await resolved(after, call) };
}

/** The hooks of a list, stored guardrails loaded. */
function resolved(items: readonly HookItem[], call: TargetCall): Promise<readonly HookSpec[]> {
  const workspace = call.run.call.ctx.apiKey.workspace_id;
  return Promise.all(
    items.map((item) => (isStoredRef(item) ? resolveStoredGuardrail(call.run.deps, workspace, item) : item)),
  );
}

/** An output hook that must see the answer before the client does. */
function mayDenyOrRewrite(hook: HookSpec): boolean {
  if (hook.async) return false;
  if (hook.onFail.deny || hook.onSuccess.deny || hook.type === 'mutator') return true;
  // A check that rewrites by itself: `default.pii` with `redact: true`, `default.regexReplace`.
  return hook.checks.some((check) => check.definition.rewrites?.(check.parameters) === true);
}

function isAsync(hook: HookSpec): boolean {
  return hook.async;
}

function allResults(results: HookResults): HookResults {
  return results;
}

/** The results of the hooks that decided the answer: async ones reach the log only. */
function decidingResults(results: HookResults): HookResults {
  return {
    before_request_hooks: results.before_request_hooks.filter((hook) => !hook.async),
    after_request_hooks: results.after_request_hooks.filter((hook) => !hook.async),
  };
}

function withStatus(outcome: AttemptOutcome, failed: boolean): AttemptOutcome {
  if (!outcome.ok || !failed || outcome.status !== 200) return outcome;
  return { ...outcome, status: HOOKS_FAILED_STATUS };
}

function deniedOutcome(
  hook: HookResult,
  shown: HookResults,
  answered: AttemptSuccess | undefined,
): AttemptOutcome {
  const failure = gatewayFailure(new HooksDeniedError(hook, shown), 'hooks_denied');
  if (!answered) return failure;
  // The provider answered (and billed it): its usage and timing are kept, its answer is not.
  return { ...failure, usage: answered.usage, ttfbMs: answered.ttfbMs };
}

/**
 * A rewrite of a continued answer that changes what the client already has cannot be joined to it: the
 * rest is withheld and the stream ends with the in-band error (the provider's usage is kept).
 */
function unjoinableRewrite(answered: AttemptSuccess): AttemptOutcome {
  const error = new GatewayError(
    'hooks_failed',
    'An output check rewrote text the client already has of this continued answer: the rest cannot be joined to it',
  );
  return { ...gatewayFailure(error, 'hooks_denied'), usage: answered.usage, ttfbMs: answered.ttfbMs };
}

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
