/**
 * `default.allowedRequestTypes` {allowed}: passes when the call's type (`chatComplete`, `complete`, `embed`,
 * `messages`, `messagesCountTokens`, `createModelResponse`: the endpoint, under the reference gateway's names)
 * is in `allowed`. The seed's own names are accepted too: `allowedTypes` (the same list) and `blockedTypes`
 * (types refused; a blocked type fails even when allowed). A type named in both lists is a config error.
 * Before the request only: after the call it would only withhold what was paid for.
 *
 * As configs written for the reference gateway give them, a list may be a comma-separated string
 * (`"chatComplete, embed"`), and may name that gateway's other call types (`imageGenerate`, `createSpeech`
 * …): no call this gateway runs hooks on has one, so such a name only matches nothing. A name of no call
 * type at all is refused, as a misspelling would otherwise block or allow nothing unnoticed.
 */
import { Type } from '@sinclair/typebox';
import type { ParameterRuleBreak } from '../built-in-check.js';
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

/** The reference gateway's other call types: accepted in the lists, never a call that runs hooks here. */
const OTHER_REFERENCE_TYPES = [
  'rerank',
  'moderate',
  'stream-complete',
  'stream-chatComplete',
  'stream-messages',
  'proxy',
  'imageGenerate',
  'imageEdit',
  'createSpeech',
  'createTranscription',
  'createTranslation',
  'realtime',
  'getModelResponse',
  'deleteModelResponse',
  'listResponseInputItems',
  'uploadFile',
  'retrieveFile',
  'listFiles',
  'deleteFile',
  'retrieveFileContent',
  'createFinetune',
  'retrieveFinetune',
  'listFinetunes',
  'cancelFinetune',
  'createBatch',
  'retrieveBatch',
  'listBatches',
  'cancelBatch',
  'getBatchOutput',
] as const;

const KNOWN_TYPES: ReadonlySet<string> = new Set<string>([...CALL_TYPES, ...OTHER_REFERENCE_TYPES]);

const RequestTypes = Type.Union([
  Type.Array(Type.Union([...CALL_TYPES, ...OTHER_REFERENCE_TYPES].map((type) => Type.Literal(type))), {
    minItems: 1,
  }),
  Type.String({ minLength: 1, description: 'A comma-separated list of types.' }),
]);

type TypeList = readonly string[] | string | undefined;

/** A list's types, a comma-separated string split and trimmed. */
function typesOf(list: TypeList): readonly string[] | undefined {
  if (typeof list !== 'string') return list;
  return list
    .split(',')
    .map((type) => type.trim())
    .filter((type) => type.length > 0);
}

function listRuleBreak(field: string, list: TypeList): ParameterRuleBreak | null {
  if (typeof list !== 'string') return null;
  const types = typesOf(list)!;
  if (types.length === 0) return { param: `parameters.${field}`, message: 'names no type' };
  const unknown = types.find((type) => !KNOWN_TYPES.has(type));
  if (unknown === undefined) return null;
  return {
    param: `parameters.${field}`,
    message: `names '${unknown}', which is no call type (${CALL_TYPES.join(', ')} …)`,
  };
}

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
    for (const field of ['allowed', 'allowedTypes', 'blockedTypes'] as const) {
      const broken = listRuleBreak(field, p[field]);
      if (broken !== null) return broken;
    }
    if (p.allowed !== undefined && p.allowedTypes !== undefined) {
      return { param: 'parameters.allowedTypes', message: 'is another name for allowed: give one of them' };
    }
    const allowed = typesOf(p.allowed ?? p.allowedTypes);
    if (allowed === undefined && p.blockedTypes === undefined) {
      return { param: 'parameters.allowed', message: 'is required (or blockedTypes)' };
    }
    const both = typesOf(p.blockedTypes)?.find((type) => allowed?.includes(type));
    if (both !== undefined) {
      return { param: 'parameters.blockedTypes', message: `names '${both}', which allowed also names` };
    }
    return null;
  },
  run(ctx, p) {
    const type: CallType = ctx.callType;
    const allowed = typesOf(p.allowed ?? p.allowedTypes);
    const blocked = typesOf(p.blockedTypes)?.includes(type) === true;
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
