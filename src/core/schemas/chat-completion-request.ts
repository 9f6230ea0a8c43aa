/**
 * Body of POST /v1/chat/completions. Unknown top-level keys pass through untouched: providers
 * have parameters of their own that the gateway forwards.
 */
import { Type, type Static } from '@sinclair/typebox';
import { checkMetadataLimits } from '../metadata-limits.js';
import { fieldError } from '../validator/compile-validator.js';
import { ChatMessageSchema } from './chat-messages.js';
import {
  FunctionCallField,
  FunctionsField,
  ResponseFormatField,
  ThinkingField,
  ToolChoiceField,
  ToolsField,
} from './chat-tools.js';
import {
  LogitBiasField,
  MaxTokensField,
  MetadataField,
  ModelField,
  NField,
  Nullable,
  PenaltyField,
  SeedField,
  StopField,
  StreamField,
  StreamOptionsField,
  TemperatureField,
  TopPField,
  UserField,
} from './common-fields.js';
import { checkStreamOptionsRule, compileRequestBodyValidator } from './request-body-validator.js';
import { checkStrictChatTools } from './strict-function-schema.js';
import { checkStrictResponseFormat } from './strict-response-format.js';

export const ChatCompletionRequestSchema = Type.Object(
  {
    messages: Type.Array(ChatMessageSchema, { minItems: 1 }),
    model: ModelField,
    frequency_penalty: Type.Optional(PenaltyField),
    presence_penalty: Type.Optional(PenaltyField),
    logit_bias: Type.Optional(LogitBiasField),
    logprobs: Type.Optional(Nullable(Type.Boolean())),
    top_logprobs: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 20 }))),
    max_tokens: Type.Optional(MaxTokensField),
    max_completion_tokens: Type.Optional(MaxTokensField),
    n: Type.Optional(NField),
    response_format: Type.Optional(ResponseFormatField),
    seed: Type.Optional(SeedField),
    stop: Type.Optional(StopField),
    stream: Type.Optional(StreamField),
    stream_options: Type.Optional(StreamOptionsField),
    temperature: Type.Optional(TemperatureField),
    top_p: Type.Optional(TopPField),
    tools: Type.Optional(ToolsField),
    tool_choice: Type.Optional(ToolChoiceField),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    user: Type.Optional(UserField),
    function_call: Type.Optional(FunctionCallField),
    functions: Type.Optional(FunctionsField),
    thinking: Type.Optional(ThinkingField),
    metadata: Type.Optional(MetadataField),
    // Newer OpenAI parameters, typed loosely so new values reach the provider without a release.
    store: Type.Optional(Nullable(Type.Boolean())),
    modalities: Type.Optional(Nullable(Type.Array(Type.String()))),
    audio: Type.Optional(Nullable(Type.Object({}))),
    prediction: Type.Optional(Nullable(Type.Object({}))),
    reasoning_effort: Type.Optional(Nullable(Type.String())),
    service_tier: Type.Optional(Nullable(Type.String())),
    verbosity: Type.Optional(Nullable(Type.String())),
    web_search_options: Type.Optional(Type.Object({})),
    safety_identifier: Type.Optional(Nullable(Type.String())),
    prompt_cache_key: Type.Optional(Nullable(Type.String())),
  },
  { $id: 'ChatCompletionRequest', title: 'Chat completion request' },
);

export type ChatCompletionRequest = Static<typeof ChatCompletionRequestSchema>;

const validator = compileRequestBodyValidator(ChatCompletionRequestSchema);

export function validateChatCompletionRequest(body: unknown): ChatCompletionRequest {
  const request = validator.assert(body);
  checkChatRules(request);
  return request;
}

/** Rules that tie one field to another, which the schema cannot say. */
function checkChatRules(request: ChatCompletionRequest): void {
  checkMetadataLimits(request.metadata);
  for (let i = 0; i < request.messages.length; i++) {
    const message = request.messages[i]!;
    if (message.role !== 'assistant' || message.content != null) continue;
    const calls = (message.tool_calls?.length ?? 0) > 0 || message.function_call != null;
    if (!calls) {
      throw fieldError(
        'invalid_body',
        `messages[${i}].content`,
        'is required unless tool_calls or function_call is given',
      );
    }
  }
  if (request.top_logprobs != null && request.logprobs !== true) {
    throw fieldError('invalid_body', 'top_logprobs', 'requires logprobs to be true');
  }
  checkStreamOptionsRule(request);
  // Before any target: OpenAI refuses a strict schema it cannot take, so a translated target must too.
  checkStrictChatTools(request.tools);
  const format = request.response_format;
  if (format?.type === 'json_schema') checkStrictResponseFormat(format.json_schema, 'response_format');
}
