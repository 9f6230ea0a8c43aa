import type { ProviderCapabilities } from '../types.js';
import { ANTHROPIC_DEFAULT_MAX_TOKENS } from './anthropic-config.js';

export const anthropicCapabilities: ProviderCapabilities = {
  endpoints: ['chat', 'messages', 'count_tokens'],
  streaming: true,
  tools: true,
  parallelToolCalls: true,
  images: true,
  jsonSchema: true,
  thinking: true,
  promptCaching: true,
  n: 'fanout',
  parameters: {
    messages:
      '→ system (system and developer messages, wherever they appear) + alternating user/assistant messages',
    max_tokens: `→ max_tokens (required by Anthropic: default ${ANTHROPIC_DEFAULT_MAX_TOKENS}, or budget_tokens + ${ANTHROPIC_DEFAULT_MAX_TOKENS} with thinking)`,
    max_completion_tokens: '→ max_tokens (wins over max_tokens)',
    temperature: '→ temperature (Anthropic accepts 0–1; values above 1 are refused by Anthropic)',
    top_p: '→ top_p',
    stop: '→ stop_sequences',
    user: '→ metadata.user_id',
    tools: '→ tools (parameters → input_schema; cache_control and strict passed through)',
    tool_choice:
      '→ tool_choice (none → none, auto → auto, required → any, function → tool; allowed_tools → only the allowed tools sent, its mode auto → auto, required → any)',
    parallel_tool_calls: '→ tool_choice.disable_parallel_tool_use when false',
    response_format:
      'json_schema → output_config.format; json_object → a forced tool `json` whose input alone is returned as content, text beside it dropped (not combinable with tools)',
    thinking: '→ thinking (extended thinking); thinking comes back in content_blocks when not strict',
    stream_options: 'include_usage → a final usage chunk',
    cache_control:
      "on a content part → on its block; on a whole message → on the message's last block (a tool message's tool_result); more than 4 breakpoints, or one with ttl 1h after a 5m one in the order Anthropic reads them (tools, system and developer messages, messages), refused (400) naming the field",
    seed: 'dropped: Anthropic has no seed; determinism is best-effort in OpenAI too',
    n: 'fanned out by the gateway (Anthropic returns one answer)',
    frequency_penalty: 'refused (400) unless 0: not supported by Anthropic',
    presence_penalty: 'refused (400) unless 0: not supported by Anthropic',
    logit_bias: 'refused (400): not supported by Anthropic',
    logprobs: 'refused (400) when true: not supported by Anthropic',
    top_logprobs: 'refused (400): not supported by Anthropic',
    functions: 'refused (400): use tools',
    function_call: 'refused (400): use tool_choice',
    reasoning_effort: 'refused (400): use thinking',
  },
  credentials: ['api_key', 'custom_host'],
  notes: [
    "prompt_tokens = input_tokens + cache_read_input_tokens + cache_creation_input_tokens; cached_tokens = cache_read_input_tokens; cache_write_tokens (not OpenAI's) = cache_creation_input_tokens when above 0, and cache_write_1h_tokens (not OpenAI's) = cache_creation.ephemeral_1h_input_tokens, the writes kept an hour, when above 0; server_tool_use (not OpenAI's) = the web_search_requests and web_fetch_requests of usage.server_tool_use, when any is above 0, priced at the price table's tool_fees; completion_tokens_details.reasoning_tokens = output_tokens_details.thinking_tokens (part of output_tokens), when above 0.",
    "service_tier (of the answer, and of every chunk of a stream) = usage.service_tier, the tier that served the call, in OpenAI's words: standard is default, priority is priority; the call is priced on it, answered whole or streamed.",
    "Image URLs are passed to Anthropic as URL sources; data URLs as base64 sources. PDF files are accepted as data URLs, and by URL (the gateway's file.file_url, a Responses input_file's file_url) as a document of URL source, which Anthropic fetches (http(s) only; the gateway never fetches it).",
    'anthropic-version defaults to 2023-06-01; a client anthropic-version or anthropic-beta header is passed on.',
    'Embeddings are refused (Anthropic has no embeddings endpoint).',
  ],
};
