/** The text checks read from a request or an answer body (the rules are the checks' own: hooks/text.ts). */
import type { HookRequestType } from '../../hooks/check-types.js';

type Json = Record<string, unknown>;

export function requestText(_type: HookRequestType, body: Json): string {
  const messages = body.messages;
  if (Array.isArray(messages)) {
    const last = messages.at(-1) as { content?: unknown } | undefined;
    return typeof last?.content === 'string' ? last.content : '';
  }
  const input = body.prompt ?? body.input;
  return typeof input === 'string' ? input : Array.isArray(input) ? input.join('\n') : '';
}

export function answerText(_type: HookRequestType, body: Json): string {
  const choices = body.choices;
  if (!Array.isArray(choices)) return '';
  return choices
    .map((choice: { message?: { content?: unknown }; text?: unknown }) => {
      const content = choice.message ? choice.message.content : choice.text;
      return typeof content === 'string' ? content : '';
    })
    .join('\n');
}
