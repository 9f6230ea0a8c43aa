/**
 * The tokens a call reserves before it is made, settled to the answer's usage after: an estimate of
 * its input (about four characters a token, the usual rule for English text with the common
 * tokenizers) plus the most it may produce (`max_completion_tokens`, else `max_tokens`, else a Responses
 * request's `max_output_tokens`, for each of its `n` choices) when it says. Inline media (a data URL, `input_audio.data`, `file_data`)
 * counts as INLINE_MEDIA_TOKENS, not as its base64.
 * An answer may use more than was reserved; its usage is charged in full when it is settled, and an answer
 * that gives none is settled to an estimate of its request and its answer at the same rate
 * (tokensWithoutUsage).
 */
import type { TargetCall } from '../pipeline-types.js';

const CHARACTERS_PER_TOKEN = 4;

/**
 * The most a call reserves: the largest `value` a policy may have, so a reservation fills any counter
 * and no more. A call may ask for more than a number holds (`max_tokens: 1e308` for each of two choices
 * is Infinity), and a counter charged Infinity and settled back would hold NaN, admitting every call.
 */
const MAX_RESERVATION = 1e12;

/**
 * What an inline picture, sound or file counts for. Its base64 is no text (a 300 kB image is 400,000
 * characters, a whole minute's budget at 100,000 tokens) and providers bill it far below that: OpenAI at
 * most about 1,100 tokens for an image in high detail.
 */
const INLINE_MEDIA_TOKENS = 1_000;
const INLINE_MEDIA_CHARACTERS = INLINE_MEDIA_TOKENS * CHARACTERS_PER_TOKEN;

/** Fields whose string is inline media (base64) wherever it appears: input_audio.data, file.file_data. */
const MEDIA_FIELDS = new Set(['data', 'file_data']);
const INLINE_MEDIA_PLACEHOLDER = ' '.repeat(INLINE_MEDIA_CHARACTERS);

/** What a call reserves, and the characters of its input that counted (a model call's, inputLength): an
 * answer without usage is settled by them (tokensWithoutUsage), so they are counted once, here. */
export interface TokenReservation {
  tokens: number;
  /** Undefined for a pass-through, whose answer without usage is settled by the bytes that went by. */
  inputLength: number | undefined;
}

export function tokenReservation(call: TargetCall): TokenReservation {
  if (call.endpoint === 'passthrough') {
    // The body is the provider's own and streams through unread: its size is the estimate (a body sent
    // in chunks has none yet; it is settled to the bytes that went by, tokensWithoutUsage).
    const length = Number(call.run.call.passthrough?.headers['content-length'] ?? 0);
    return {
      tokens: Math.max(1, tokensOfBytes(Number.isFinite(length) ? length : 0)),
      inputLength: undefined,
    };
  }
  const body = call.body as Record<string, unknown>;
  const output =
    numberOf(body.max_completion_tokens) ??
    numberOf(body.max_tokens) ??
    numberOf(body.max_output_tokens) ??
    0;
  // Each of `n` choices may produce that much.
  const choices = numberOf(body.n) ?? 1;
  const length = inputLength(call);
  return {
    tokens: Math.min(MAX_RESERVATION, Math.max(1, tokensOfBytes(length) + output * choices)),
    inputLength: length,
  };
}

/**
 * The characters of a model call's input as its reservation counts them: its messages, prompt or input
 * (as JSON when not one string), inline media at INLINE_MEDIA_TOKENS' length.
 */
function inputLength(call: TargetCall): number {
  const body = call.body as Record<string, unknown>;
  const input = body.messages ?? body.prompt ?? body.input ?? '';
  return typeof input === 'string' ? input.length : JSON.stringify(input, countingMediaAsTokens).length;
}

/**
 * What a call whose answer gave no usage is settled to: its request and its answer at CHARACTERS_PER_TOKEN
 * a token. A pass-through call's are its request body's bytes as read from the client and its answer's as
 * relayed; a model call's its input's characters as its reservation counted them (inputLength, carried in
 * its admission) and its answer's text (answer-text.ts). Without it a body sent in chunks (no
 * `content-length`), a stream without usage (an OpenAI stream the client asked for without
 * `stream_options.include_usage`, a provider that sends none) and a model call's answer without usage
 * would stand at their reservation, which counts no output when the request set no limit on it, however
 * long the answer.
 */
export function tokensWithoutUsage(requestLength: number, answerLength: number): number {
  return tokensOfBytes(requestLength + answerLength);
}

function tokensOfBytes(bytes: number): number {
  return Math.min(MAX_RESERVATION, Math.max(0, Math.ceil(bytes / CHARACTERS_PER_TOKEN)));
}

function numberOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.ceil(value) : undefined;
}

/** A JSON.stringify replacer: inline media (a data URL, a base64 field) as INLINE_MEDIA_TOKENS' length. */
function countingMediaAsTokens(key: string, value: unknown): unknown {
  if (typeof value !== 'string' || value.length <= INLINE_MEDIA_CHARACTERS) return value;
  return value.startsWith('data:') || MEDIA_FIELDS.has(key) ? INLINE_MEDIA_PLACEHOLDER : value;
}
