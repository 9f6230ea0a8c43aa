/**
 * The tokens a call reserves before it is made, settled to the answer's usage after: an estimate of
 * its input (about four characters a token, the usual rule for English text with the common
 * tokenizers) plus the most it may produce (`max_completion_tokens`, else `max_tokens`, else a Responses
 * request's `max_output_tokens`) when it says.
 * An answer may use more than was reserved; its usage is charged in full when it is settled.
 */
import type { TargetCall } from '../pipeline-types.js';

const CHARACTERS_PER_TOKEN = 4;

export function tokenReservation(call: TargetCall): number {
  if (call.endpoint === 'passthrough') {
    // The body is the provider's own and streams through unread: its size is the estimate.
    const length = Number(call.run.call.passthrough?.headers['content-length'] ?? 0);
    return Math.max(1, Math.ceil((Number.isFinite(length) ? length : 0) / CHARACTERS_PER_TOKEN));
  }
  const body = call.body as Record<string, unknown>;
  const input = body.messages ?? body.prompt ?? body.input ?? '';
  const text = typeof input === 'string' ? input : JSON.stringify(input);
  const output =
    numberOf(body.max_completion_tokens) ??
    numberOf(body.max_tokens) ??
    numberOf(body.max_output_tokens) ??
    0;
  return Math.max(1, Math.ceil(text.length / CHARACTERS_PER_TOKEN) + output);
}

function numberOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.ceil(value) : undefined;
}
