/** Where the Anthropic Messages API lives and the values the adapter sends when the client sets none. */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_MESSAGES_PATH = '/v1/messages';
export const ANTHROPIC_DEFAULT_VERSION = '2023-06-01';

/** Anthropic requires `max_tokens`; OpenAI does not. Used when the request names no limit. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/** The forced tool that carries a `response_format: json_object` answer (Anthropic has no JSON mode). */
export const JSON_RESPONSE_TOOL_NAME = 'json';
