/**
 * The 446 answer: a hook with `deny` failed, before the call (no provider was called) or after it (the
 * provider's answer is withheld). Its body is the OpenAI error object with every hook's result beside it,
 * `{error: {type: "hooks_failed", …}, hook_results: {before_request_hooks, after_request_hooks}}`, for a
 * JSON answer and for the in-band error of a stream alike.
 */
import { GatewayError, type ErrorBody } from '../../core/errors.js';
import type { HookResult, HookResults } from './hook-result-types.js';

export class HooksDeniedError extends GatewayError {
  constructor(
    readonly denied: HookResult,
    readonly results: HookResults,
  ) {
    const when = denied.event === 'beforeRequestHook' ? 'before the request' : 'after the request';
    super('hooks_failed', `The request was denied by hook '${denied.id}' ${when}: ${deniedBecause(denied)}`);
  }

  override toBody(): ErrorBody & { hook_results: HookResults } {
    return { ...super.toBody(), hook_results: this.results };
  }
}

function deniedBecause(hook: HookResult): string {
  if (!hook.verdict) {
    const failed = hook.checks.filter((check) => !check.verdict).map((check) => check.id);
    return `check(s) ${failed.join(', ')} failed`;
  }
  return 'its checks passed and on_success denies';
}
