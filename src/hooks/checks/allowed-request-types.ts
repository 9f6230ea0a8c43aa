/**
 * `default.allowedRequestTypes` {allowed}: passes when the call's type (`chatComplete`, `complete`, `embed`,
 * `messages`, `messagesCountTokens`, `createModelResponse`: the endpoint, under the reference gateway's names)
 * is in `allowed`. The seed's own names are accepted too: `allowedTypes` (the same list) and `blockedTypes`
 * (types refused; a blocked type fails even when allowed). A type named in both lists is a config error.
 * Before the request only: after the call it would only withhold what was paid for.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../built-in-check.js';
import type { CallType } from '../check-types.js';

const CALL_TYPES = [
  'chatComplete',
  'complete',
  'embed',
  'messages',
  'messagesCountTokens',
  'createModelResponse',
] as const satisfies readonly CallType[];

const RequestTypes = Type.Array(Type.Union(CALL_TYPES.map((type) => Type.Literal(type))), { minItems: 1 });

export const allowedRequestTypes = defineCheck({
  id: 'allowedRequestTypes',
  events: ['beforeRequestHook'],
  parameters: Type.Object(
    {
      allowed: Type.Optional(RequestTypes),
      allowedTypes: Type.Optional(RequestTypes),
      blockedTypes: Type.Optional(RequestTypes),
    },
    { additionalProperties: false },
  ),
  refine(p) {
    if (p.allowed !== undefined && p.allowedTypes !== undefined) {
      return { param: 'parameters.allowedTypes', message: 'is another name for allowed: give one of them' };
    }
    const allowed = p.allowed ?? p.allowedTypes;
    if (allowed === undefined && p.blockedTypes === undefined) {
      return { param: 'parameters.allowed', message: 'is required (or blockedTypes)' };
    }
    const both = p.blockedTypes?.find((type) => allowed?.includes(type));
    if (both !== undefined) {
      return { param: 'parameters.blockedTypes', message: `names '${both}', which allowed also names` };
    }
    return null;
  },
  run(ctx, p) {
    const type: CallType = ctx.callType;
    const allowed = p.allowed ?? p.allowedTypes;
    const blocked = p.blockedTypes?.includes(type) === true;
    const verdict = !blocked && (allowed === undefined || allowed.includes(type));
    return {
      verdict,
      explanation: verdict
        ? `Request type "${type}" is allowed.`
        : blocked
          ? `Request type "${type}" is blocked.`
          : `Request type "${type}" is not allowed; allowed: ${allowed!.join(', ')}.`,
      data: { requestType: type },
    };
  },
});
