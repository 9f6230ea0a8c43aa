import { GatewayError } from '../../core/errors.js';
import type { AdapterRequest } from '../types.js';
import type { ChatCompletionRequest } from '../../core/schemas/index.js';
import { jsonResponseFormat, requireThinkingBudget, stopSequences } from '../shared/chat-request-fields.js';
import { refuseUnsupportedParameters } from '../shared/unsupported-parameters.js';
import { checkAnthropicCacheBreakpoints } from './anthropic-cache-breakpoints.js';
import { ANTHROPIC_DEFAULT_MAX_TOKENS, JSON_RESPONSE_TOOL_NAME } from './anthropic-config.js';
import { prepareAnthropicTools } from './anthropic-prepare-tools.js';
import { convertToAnthropicMessages } from './convert-to-anthropic-messages.js';

/** OpenAI parameters Anthropic has no equivalent for; refused unless set to their neutral value. */
export const ANTHROPIC_UNSUPPORTED_PARAMETERS = [
  'frequency_penalty',
  'presence_penalty',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'functions',
  'function_call',
  'audio',
  'modalities',
  'prediction',
  'web_search_options',
  'reasoning_effort',
] as const;

export interface AnthropicBodyOptions {
  /** false when the caller puts the model elsewhere (e.g. in the URL, as Vertex AI does). Default true. */
  includeModel?: boolean;
}

/**
 * The Anthropic Messages request body for an OpenAI chat request. Pure: usable by any host of Anthropic
 * models (Anthropic's own API, Vertex AI, …), which add their own URL, headers and version field.
 */
export function toAnthropicMessagesBody(
  req: AdapterRequest<'chat'>,
  options: AnthropicBodyOptions = {},
): Record<string, unknown> {
  const body = req.body;
  refuseUnsupportedParameters(body, ANTHROPIC_UNSUPPORTED_PARAMETERS, 'anthropic');

  const { system, messages } = convertToAnthropicMessages(body.messages ?? []);
  const out: Record<string, unknown> = {};
  if (options.includeModel !== false) out.model = body.model;
  out.messages = messages;
  if (system.length > 0) out.system = system;

  const thinking = body.thinking;
  const budget = thinking?.type === 'enabled' ? requireThinkingBudget(thinking) : undefined;
  // max_tokens must exceed the thinking budget, so the default leaves room for the answer after it.
  out.max_tokens =
    body.max_completion_tokens ??
    body.max_tokens ??
    (budget !== undefined ? budget + ANTHROPIC_DEFAULT_MAX_TOKENS : ANTHROPIC_DEFAULT_MAX_TOKENS);
  if (thinking?.type === 'enabled') out.thinking = { type: 'enabled', budget_tokens: budget };
  else if (thinking?.type === 'disabled') out.thinking = { type: 'disabled' };

  if (body.temperature !== undefined && body.temperature !== null) out.temperature = body.temperature;
  if (body.top_p !== undefined && body.top_p !== null) out.top_p = body.top_p;
  if (body.stop !== undefined && body.stop !== null) {
    out.stop_sequences = stopSequences(body.stop);
  }
  if (typeof body.user === 'string' && body.user !== '') out.metadata = { user_id: body.user };
  if (req.stream) out.stream = true;

  const tools = prepareAnthropicTools(body);
  Object.assign(out, tools);
  checkAnthropicCacheBreakpoints({ tools: tools.tools, system, messages });
  applyResponseFormat(body, out);
  return out;
}

function applyResponseFormat(body: ChatCompletionRequest, out: Record<string, unknown>): void {
  const format = jsonResponseFormat(body);
  if (format?.type === 'json_schema') {
    out.output_config = { format: { type: 'json_schema', schema: format.json_schema.schema } };
  } else if (format?.type === 'json_object') {
    // No schema-free JSON mode exists: a forced tool taking any object carries the answer.
    if (out.tools) {
      throw new GatewayError(
        'unsupported_parameter',
        'response_format json_object cannot be combined with tools on anthropic; use json_schema',
        { param: 'response_format' },
      );
    }
    out.tools = [
      {
        name: JSON_RESPONSE_TOOL_NAME,
        description: 'Respond with a JSON object.',
        input_schema: { type: 'object', additionalProperties: true },
      },
    ];
    out.tool_choice = { type: 'tool', name: JSON_RESPONSE_TOOL_NAME };
  }
}
