/**
 * A refusal of the chat request a Responses request was translated into names the Responses field it came
 * from, as OpenAI's Responses API names it: a provider's `messages` (a prompt over the context window) is
 * the client's `input`, `max_tokens` its `max_output_tokens`, `response_format` its `text.format`, an
 * adapter's `thinking` its `reasoning.effort`, a function tool's `function.name` its `name`, an allowed tool's
 * `tool_choice.allowed_tools.tools[i]` its `tool_choice.tools[i]`.
 */
import { GatewayError, ProviderError } from '../../core/errors.js';
import type { AttemptOutcome } from '../attempt.js';

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

/** The Responses field a chat request's field was made from; undefined when it is named alike. */
export function responsesParam(chatParam: string): string | undefined {
  for (const [pattern, replacement] of RENAMES) {
    if (pattern.test(chatParam)) return chatParam.replace(pattern, replacement);
  }
  return undefined;
}

/**
 * The outcome with its error naming the client's field. The gateway's own message says the field too; a
 * provider's message is its own words, kept.
 */
export function inResponsesTerms(outcome: AttemptOutcome): AttemptOutcome {
  if (outcome.ok || outcome.error.param === null) return outcome;
  const { error } = outcome;
  const chatParam = error.param as string;
  const param = responsesParam(chatParam);
  if (param === undefined) return outcome;
  const renamed =
    error instanceof GatewayError
      ? new GatewayError(error.code, error.message.split(chatParam).join(param), {
          param,
          headers: error.headers,
          cause: error.cause,
        })
      : new ProviderError({
          status: error.status,
          message: error.message,
          provider: error.provider,
          type: error.type,
          code: error.code,
          param,
          retryAfterMs: error.retryAfterMs,
          headers: error.headers,
        });
  return { ...outcome, error: renamed };
}
