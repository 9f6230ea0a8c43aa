/**
 * A refusal of the chat request a Responses request was translated into names the Responses field it came
 * from, as OpenAI's Responses API names it: a provider's `messages` (a prompt over the context window) is
 * the client's `input`, `max_tokens` its `max_output_tokens`, `response_format` its `text.format`, an
 * adapter's `thinking` its `reasoning.effort`, a function tool's `function.name` its `name`, an allowed tool's
 * `tool_choice.allowed_tools.tools[i]` its `tool_choice.tools[i]`. A field of one message is the input item's
 * it was made from (item-paths.ts).
 */
import { GatewayError, ProviderError } from '../../core/errors.js';
import type { AttemptOutcome } from '../attempt.js';
import { itemPathOfChatParam, type FieldTerms, type MessageOrigin } from './item-paths.js';

const RENAMES: ReadonlyArray<readonly [RegExp, string]> = [
  // The conversation's items become messages (several items one turn, instructions a system message).
  [/^messages(?:\[.*)?$/s, 'input'],
  [/^(?:max_tokens|max_completion_tokens)$/, 'max_output_tokens'],
  [/^response_format(?:\.json_schema)?(.*)$/s, 'text.format$1'],
  [/^(?:thinking(?:\..*)?|reasoning_effort)$/s, 'reasoning.effort'],
  [/^tools\[(\d+)\]\.function(.*)$/s, 'tools[$1]$2'],
  [/^tool_choice\.function(.*)$/s, 'tool_choice$1'],
  [/^tool_choice\.allowed_tools\.(.*)$/s, 'tool_choice.$1'],
];

/**
 * The Responses field a chat request's field was made from; undefined when it is named alike. With the
 * messages' `origins`, a message's field is its item's (`input[k]…`, the pipeline's index), else `input`.
 */
export function responsesParam(chatParam: string, origins?: readonly MessageOrigin[]): string | undefined {
  const itemPath = origins && itemPathOfChatParam(chatParam, origins);
  if (itemPath) return itemPath;
  for (const [pattern, replacement] of RENAMES) {
    if (pattern.test(chatParam)) return chatParam.replace(pattern, replacement);
  }
  return undefined;
}

/** The gateway's own message in the client's words: the field it names, and an input item's path always
 * (an adapter may say what it refuses without naming where). */
function ownMessage(message: string, sentParam: string, named: FieldTerms): string {
  const renamed = message.split(sentParam).join(named.text);
  const item = named.param.startsWith('input[') || named.param === 'previous_response_id';
  return item && !renamed.includes(named.text) ? `${named.text}: ${renamed}` : renamed;
}

/**
 * The outcome with its error naming the client's field, as `terms` names the field the target was sent
 * (undefined: named alike). The gateway's own message says the field too, in the same words; a provider's
 * message is its own words, kept, but for the path of an input item it quotes (`'input[3].content'`),
 * which is the client's.
 */
export function inResponsesTerms(
  outcome: AttemptOutcome,
  terms: (param: string) => FieldTerms | undefined,
): AttemptOutcome {
  if (outcome.ok || outcome.error.param === null) return outcome;
  const { error } = outcome;
  const sentParam = error.param as string;
  const named = terms(sentParam);
  if (named === undefined || (named.param === sentParam && named.text === sentParam)) return outcome;
  const { param } = named;
  const renamed =
    error instanceof GatewayError
      ? new GatewayError(error.code, ownMessage(error.message, sentParam, named), {
          param,
          headers: error.headers,
          cause: error.cause,
        })
      : new ProviderError({
          status: error.status,
          message: sentParam.startsWith('input[')
            ? error.message.split(sentParam).join(named.text)
            : error.message,
          provider: error.provider,
          type: error.type,
          code: error.code,
          param,
          retryAfterMs: error.retryAfterMs,
          headers: error.headers,
        });
  return { ...outcome, error: renamed };
}
