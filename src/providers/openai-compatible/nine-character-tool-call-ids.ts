/**
 * Mistral takes a tool call id only as 9 letters or digits (`Tool call id was call_… but must be a-z, A-Z,
 * 0-9, with a length of 9`, a 400), so a conversation whose tool calls came from another provider (a
 * fallback from OpenAI, Anthropic's `toolu_…`, the gateway's own `call_…` for Gemini) could not go on there.
 * Each id that does not fit is sent as one made from its hash: the same id gives the same 9 characters, so
 * an assistant's tool call and the tool message answering it stay paired, and distinct ids stay distinct
 * (62^9 values).
 */
import { createHash } from 'node:crypto';

const FITS = /^[a-zA-Z0-9]{9}$/;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

type Json = Record<string, unknown>;

export function nineCharacterId(id: string): string {
  if (FITS.test(id)) return id;
  const digest = createHash('sha256').update(id).digest();
  let out = '';
  for (let i = 0; i < 9; i++) out += ALPHABET[digest[i]! % ALPHABET.length];
  return out;
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const needsNewId = (value: unknown): value is string => typeof value === 'string' && !FITS.test(value);

function messageNeedsIds(message: unknown): boolean {
  if (!isObject(message)) return false;
  if (needsNewId(message.tool_call_id)) return true;
  return (
    Array.isArray(message.tool_calls) &&
    message.tool_calls.some((call) => isObject(call) && needsNewId(call.id))
  );
}

/** The messages with every tool call id in 9 letters or digits; the same array when all already are. */
export function withNineCharacterToolCallIds(messages: unknown): unknown {
  if (!Array.isArray(messages) || !messages.some(messageNeedsIds)) return messages;
  return messages.map((message: unknown) => {
    if (!messageNeedsIds(message)) return message;
    const out: Json = { ...(message as Json) };
    if (typeof out.tool_call_id === 'string') out.tool_call_id = nineCharacterId(out.tool_call_id);
    if (Array.isArray(out.tool_calls)) {
      out.tool_calls = out.tool_calls.map((call: unknown) =>
        isObject(call) && typeof call.id === 'string' ? { ...call, id: nineCharacterId(call.id) } : call,
      );
    }
    return out;
  });
}
