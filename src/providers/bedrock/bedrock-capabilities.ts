import type { ProviderCapabilities } from '../types.js';
import { THINKING_ANSWER_TOKENS } from './bedrock-config.js';
import { bedrockEmbeddingInputsPerCall } from './bedrock-embeddings.js';
import { mayBeAnthropicModel } from './bedrock-model-ids.js';

export const bedrockCapabilities: ProviderCapabilities = {
  endpoints: ['chat', 'embeddings', 'messages'],
  streaming: true,
  tools: true,
  parallelToolCalls: true,
  images: true,
  jsonSchema: true,
  thinking: true,
  promptCaching: true,
  // As the Converse body judges it: by cloudc_base_model when the id is an ARN naming none.
  takesThinking: (model, target) => mayBeAnthropicModel(target.cloudc_base_model ?? model),
  n: 'fanout',
  // Titan embeds one text a call, Cohere Embed at most 96: a longer list goes as several calls.
  embeddingInputsPerCall: (req) =>
    bedrockEmbeddingInputsPerCall(String(req.body.model), req.target.cloudc_base_model),
  parameters: {
    messages:
      '→ system + messages (Converse); tool results → toolResult blocks in a user turn; a conversation that would open with the assistant (or has only a system prompt) gets a user turn "Please continue." in front, as Converse requires',
    max_tokens: `→ inferenceConfig.maxTokens (with thinking and no limit: budget_tokens + ${THINKING_ANSWER_TOKENS})`,
    max_completion_tokens: '→ inferenceConfig.maxTokens (wins over max_tokens)',
    temperature: '→ inferenceConfig.temperature',
    top_p: '→ inferenceConfig.topP',
    stop: '→ inferenceConfig.stopSequences',
    tools: '→ toolConfig.tools[].toolSpec (strict passed through)',
    tool_choice:
      "→ toolConfig.toolChoice (auto or none given → no toolChoice, Converse's default, as only Claude, Mistral Large and Nova take the field; required → any, function → tool; allowed_tools → only the allowed tools sent, its mode as the choice; none → tools left out, or sent without a choice when the history holds tool calls; a history with tool calls and no tools gets one inert placeholder tool, no_tools_available, since Converse requires a toolConfig with it)",
    response_format:
      'json_schema → outputConfig.textFormat (json_schema); json_object → a forced tool `json` whose input alone is returned as content, text beside it dropped (not combinable with tools): toolChoice tool on Claude, Nova and ARNs that name no model, any on Mistral Large; other models take no toolChoice and are refused (400)',
    thinking:
      '→ additionalModelRequestFields.thinking (Anthropic Claude models, and ARNs that name no model such as application inference profiles; others 400, but for a translated Messages request, which leaves it out); reasoning comes back in content_blocks when not strict',
    stream_options: 'include_usage → a final usage chunk from the metadata event',
    cache_control:
      'on a content part, a message or a tool → a cachePoint block after it (ttl kept; none on an assistant message of reasoning alone, as Converse takes no point after a reasoning block), where the model caches: Claude 3.5 Haiku, 3.7 Sonnet and later (system, messages, tools), Nova (system, messages); dropped for the others; of those sent, more than 4, or one with ttl 1h after a 5m one (toolConfig, system, messages order), refused (400) naming the field',
    image_url:
      'data URLs only (Converse takes bytes; the adapter does not fetch URLs): an http(s) URL is refused (400)',
    file: 'PDF data URLs in file_data → document bytes; a file_url is refused (400), as the adapter fetches no URL',
    parallel_tool_calls: 'dropped: Converse has no switch for it',
    seed: 'dropped: Converse has no seed',
    user: 'dropped: Converse has no end-user field',
    n: 'fanned out by the gateway',
    frequency_penalty: 'refused (400) unless 0',
    presence_penalty: 'refused (400) unless 0',
    logit_bias: 'refused (400)',
    logprobs: 'refused (400) when true',
    top_logprobs: 'refused (400)',
    functions: 'refused (400): use tools',
    'embeddings.input':
      'amazon.titan-embed-*: inputText, one text a call (a list goes as a call per text, merged in input order); cohere.embed-*: texts array of at most 96 a call (a longer list goes as calls of 96), input_type default search_document; for an ARN that names no model (application inference profile…), the family of cloudc_base_model (400 without it)',
    'embeddings.dimensions':
      'titan → dimensions; cohere.embed-v4 → output_dimension; Cohere Embed v3: refused (400)',
    'embeddings.encoding_format': 'base64 is encoded by the gateway from the float vector',
  },
  credentials: [
    'cloudc_region',
    'cloudc_access_key_id',
    'cloudc_secret_access_key',
    'cloudc_session_token',
    'cloudc_base_model',
    'custom_host',
  ],
  notes: [
    'Requests are signed with AWS SigV4 (service bedrock) over the final URL, custom_host included.',
    "prompt_tokens = inputTokens + cacheReadInputTokens + cacheWriteInputTokens; cached_tokens = cacheReadInputTokens; cache_write_tokens (not OpenAI's) = cacheWriteInputTokens when above 0, and cache_write_1h_tokens (not OpenAI's) = the cacheDetails written with ttl 1h when above 0.",
    'An answer ended with malformed_tool_use or malformed_model_output and neither text nor a tool call fails with a 500 (code: the stop reason).',
    'Stream exceptions keep Bedrock statuses: throttlingException 429, modelStreamErrorException 424, internalServerException 500, serviceUnavailableException 503.',
  ],
};
