/**
 * The user turn put before a conversation that a provider would refuse for how it opens: Bedrock Converse
 * wants a user turn first ("A conversation must start with a user message"), Gemini at least one content
 * ("contents is not specified"), and OpenAI takes a conversation that opens with the assistant or holds only
 * a system prompt. LiteLLM sends the same text for the same reason.
 */
export const CONVERSATION_START_TEXT = 'Please continue.';
