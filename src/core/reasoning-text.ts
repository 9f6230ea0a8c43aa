/**
 * The reasoning an OpenAI-wire provider answers beside the text, in a field of its own that the gateway
 * relays as it came: `reasoning_content` (DeepSeek, xAI, Qwen, vLLM) or `reasoning` (Groq, OpenRouter,
 * newer vLLM), on a message or a stream's delta. Anthropic's answer has it as a thinking block.
 */
export function reasoningText(message: object | undefined): string | undefined {
  const { reasoning_content: content, reasoning } = (message ?? {}) as {
    reasoning_content?: unknown;
    reasoning?: unknown;
  };
  const text = typeof content === 'string' && content !== '' ? content : reasoning;
  return typeof text === 'string' && text !== '' ? text : undefined;
}
