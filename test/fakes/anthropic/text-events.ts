/** Anthropic Messages stream events written by hand, for a fake to send. */

/**
 * The events of a stream of one text block that says `text` in one delta per word (each word with the
 * white space before it), as the message `id` of `model`, which read `inputTokens`.
 */
export function anthropicTextEvents(
  text: string,
  message: { id: string; model: string; inputTokens: number },
): Array<Record<string, unknown>> {
  const words = text.match(/\s*\S+/g) ?? [];
  return [
    {
      type: 'message_start',
      message: {
        id: message.id,
        type: 'message',
        role: 'assistant',
        model: message.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: message.inputTokens, output_tokens: 1 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ...words.map((word) => ({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: word },
    })),
    { type: 'content_block_stop', index: 0 },
    {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: words.length },
    },
    { type: 'message_stop' },
  ];
}
