/**
 * A conversation whose assistant turn sends its reasoning back as the chat schema takes it (a signed
 * thinking part, a redacted one, text), with the tool call that reasoning led to and the call's result.
 */
export const THINKING_HISTORY = [
  { role: 'user', content: 'weather?' },
  {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'I should call the tool.', signature: 'sig-abc' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Checking.' },
    ],
    tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
];
