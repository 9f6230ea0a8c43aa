/**
 * `truncation` against the model's context window (context-windows.ts): `disabled` (the default) refuses
 * an input that does not fit with a 400; `auto` drops the oldest items until it fits, never leaving a
 * tool output or an assistant turn without the user message that began it.
 */
import { GatewayError } from '../../core/errors.js';
import type { ChatCompletionRequest } from '../../core/schemas/index.js';
import { contextWindowOf, estimateTokens } from './context-windows.js';
import type { ConversationItem } from './response-types.js';

export interface TruncationInput {
  model: string;
  truncation: 'auto' | 'disabled';
  maxOutputTokens: number;
  /** Windows set by the operator, checked before the built-in table. */
  contextWindows: Readonly<Record<string, number>>;
  items: readonly ConversationItem[];
  /** Builds the chat request for a list of items (the instructions and tools count too). */
  build(items: readonly ConversationItem[]): ChatCompletionRequest;
}

export function fitContextWindow(input: TruncationInput): ChatCompletionRequest {
  let items = input.items;
  let request = input.build(items);
  const window = contextWindowOf(input.model, input.contextWindows);
  if (window === undefined) return request;
  const fits = (candidate: ChatCompletionRequest) =>
    estimateTokens(candidate.messages) + estimateTokens(candidate.tools ?? []) + input.maxOutputTokens <=
    window;
  if (fits(request)) return request;
  if (input.truncation === 'disabled') {
    throw new GatewayError(
      'invalid_body',
      `The input (about ${estimateTokens(request.messages)} tokens) exceeds the context window of ` +
        `${input.model} (${window} tokens). Shorten it, or set truncation to "auto".`,
      { param: 'input' },
    );
  }
  while (items.length > 1 && !fits(request)) {
    items = startOfTurn(items.slice(1));
    request = input.build(items);
  }
  if (!fits(request)) {
    throw new GatewayError(
      'invalid_body',
      `The last input item alone exceeds the context window of ${input.model} (${window} tokens)`,
      { param: 'input' },
    );
  }
  return request;
}

/** Drops leading items until a user (or system) message begins the rest; keeps the last item at least. */
function startOfTurn(items: readonly ConversationItem[]): readonly ConversationItem[] {
  const start = items.findIndex((item) => 'role' in item && item.role !== 'assistant');
  return start === -1 ? items.slice(-1) : items.slice(start);
}
