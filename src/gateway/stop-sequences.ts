/**
 * Stop strings bounded by the target's provider (its adapter's `stopSequences`: OpenAI's 4, Gemini's 5;
 * Anthropic sets no such small bound), not by OpenAI's 4 for every provider: checked once the target is
 * known, before any call, for a chat or text completion's `stop` (stop-sequences-step.ts) and a Messages
 * request's `stop_sequences` translated to chat (messages/messages-to-chat.ts).
 */
import { GatewayError, type ErrorCode } from '../core/errors.js';

/** The 400 naming `param` when `given` stop strings are more than `bound`; undefined when none is due. */
export function stopSequencesRefusal(
  bound: number | undefined,
  given: number,
  param: string,
  code: ErrorCode = 'invalid_body',
): GatewayError | undefined {
  if (bound === undefined || given <= bound) return undefined;
  return new GatewayError(
    code,
    `${param}: this provider takes at most ${bound} stop sequences, ${given} were given`,
    { param },
  );
}
