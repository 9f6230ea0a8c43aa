/**
 * What a built-in check module exports: the contract's `CheckDefinition` plus the rules its parameters'
 * schema cannot say (a minimum above its maximum, a regular expression that does not compile, a JSON
 * Schema that is not one). The registry runs both at config validation, so a bad config is a 400 before
 * any call and `run` may trust its parameters.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { CheckContext, CheckDefinition } from './check-types.js';

/** A parameter that the schema accepted but the check cannot use. */
export interface ParameterRuleBreak {
  /** The offending field, relative to the check: `parameters.maxWords`. */
  param: string;
  /** Says what is wrong, without the field's name: `must be at least minWords (5)`. */
  message: string;
}

export interface BuiltInCheck<S extends TSchema = TSchema> extends CheckDefinition<Static<S>> {
  parameters: S;
  /** Rules across fields or beyond JSON Schema; runs only on parameters that passed the schema. */
  refine?(parameters: Static<S>): ParameterRuleBreak | null;
}

/** Declares a check with its parameters' type inferred from its schema. */
export function defineCheck<S extends TSchema>(check: BuiltInCheck<S>): BuiltInCheck<S> {
  return check;
}

/**
 * The text a text check reads: the answer's after the call, the request's before it. An empty one (an
 * answer of tool calls only) is nothing to judge, and the check errs, so the hook's `on_error` decides:
 * pass by default, as the reference gateway's text checks err there, or fail. Judged as zero words, it
 * failed `{minWords: 1}`, and an output guardrail pasted from that gateway denied every tool call.
 */
export function checkedText(ctx: CheckContext): string {
  const text = ctx.event === 'afterRequestHook' ? (ctx.response?.text ?? '') : ctx.request.text;
  if (text === '') throw new Error(`${checkedSubject(ctx)} has no text to check`);
  return text;
}

/** "the answer" or "the request", for explanations. */
export function checkedSubject(ctx: CheckContext): string {
  return ctx.event === 'afterRequestHook' ? 'the answer' : 'the request';
}
