/**
 * `truncation` against the model's context window (context-windows.ts): `disabled` (the default) refuses
 * an input that does not fit with a 400; `auto` drops the oldest items until it fits, never leaving a
 * tool output or an assistant turn without the user message that began it.
 */
import { GatewayError } from '../../core/errors.js';
import { contextWindowOf } from './context-windows.js';
import type { ConversationItem } from './response-types.js';

export interface TruncationInput {
  model: string;
  truncation: 'auto' | 'disabled';
  maxOutputTokens: number;
  /** Windows set by the operator, checked before the built-in table. */
  contextWindows: Readonly<Record<string, number>>;
  items: readonly ConversationItem[];
  /** The estimated tokens of the request with these items (the instructions and tools count too). */
  measure(items: readonly ConversationItem[]): number;
}

/** The items that fit: all of them, or (`auto`) the newest that do. */
export function fitContextWindow(input: TruncationInput): readonly ConversationItem[] {
  let items = input.items;
  const window = contextWindowOf(input.model, input.contextWindows);
  if (window === undefined) return items;
  // An answer that could not fit with no input at all: the limit is at fault, whatever the input.
  if (input.maxOutputTokens >= window) {
    throw new GatewayError(
      'invalid_body',
      `max_output_tokens (${input.maxOutputTokens}) leaves no room for the input in the context window ` +
        `of ${input.model} (${window} tokens)`,
      { param: 'max_output_tokens' },
    );
  }
  const fits = (candidate: readonly ConversationItem[]) =>
    input.measure(candidate) + input.maxOutputTokens <= window;
  if (fits(items)) return items;
  // Both count against the window: the message says so when the answer's room is part of it.
  const withOutput = input.maxOutputTokens > 0 ? ` with max_output_tokens (${input.maxOutputTokens})` : '';
  if (input.truncation === 'disabled') {
    throw new GatewayError(
      'invalid_body',
      `The input (about ${input.measure(items)} tokens)${withOutput} exceeds the context window of ` +
        `${input.model} (${window} tokens). Shorten it, or set truncation to "auto".`,
      { param: 'input' },
    );
  }
  while (items.length > 1 && !fits(items)) items = startOfTurn(items.slice(1));
  if (!fits(items)) {
    throw new GatewayError(
      'invalid_body',
      `The last input item alone${withOutput} exceeds the context window of ${input.model} (${window} tokens)`,
      { param: 'input' },
    );
  }
  return items;
}

/** Drops leading items until a user (or system) message begins the rest; keeps the last item at least. */
function startOfTurn(items: readonly ConversationItem[]): readonly ConversationItem[] {
  const start = items.findIndex((item) => 'role' in item && item.role !== 'assistant');
  return start === -1 ? items.slice(-1) : items.slice(start);
}
