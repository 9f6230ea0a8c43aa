import { GatewayError } from '../../core/errors.js';
import type { ChatCompletionRequest } from '../../core/schemas/index.js';
import { jsonResponseFormat, requireThinkingBudget, stopSequences } from '../shared/chat-request-fields.js';
import { refuseUnsupportedParameters } from '../shared/unsupported-parameters.js';
import { JSON_RESPONSE_TOOL_NAME, THINKING_ANSWER_TOKENS } from './bedrock-config.js';
import { prepareBedrockTools } from './bedrock-prepare-tools.js';
import { convertToBedrockMessages } from './convert-to-bedrock-messages.js';
import {
  checkCachePoints,
  promptWithoutCachePoints,
  toolsWithoutCachePoints,
} from './bedrock-cache-points.js';
import { cachePointSupport, mayBeAnthropicModel, toolChoiceSupport } from './bedrock-model-ids.js';

/** OpenAI parameters Converse has no equivalent for; refused unless set to their neutral value. */
export const BEDROCK_UNSUPPORTED_PARAMETERS = [
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

/**
 * The Converse / ConverseStream request body (the model id goes in the URL). What the model takes (thinking, a
 * tool choice) is judged by `baseModel`, the target's `cloudc_base_model`, when the id is an ARN naming none.
 */
export function toBedrockConverseBody(
  body: ChatCompletionRequest,
  baseModel?: string,
): Record<string, unknown> {
  const model = baseModel ?? String(body.model);
  refuseUnsupportedParameters(body, BEDROCK_UNSUPPORTED_PARAMETERS, 'bedrock');
  // cache_control marks cache points where the model takes them; elsewhere it is a hint dropped, as on
  // every provider without prompt caching.
  const caching = cachePointSupport(model);
  const prompt = convertToBedrockMessages(body.messages ?? []);
  const { system, messages } = caching === 'none' ? promptWithoutCachePoints(prompt) : prompt;
  const out: Record<string, unknown> = { messages };
  if (system.length > 0) out.system = system;

  const inference: Record<string, unknown> = {};
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (maxTokens !== undefined && maxTokens !== null) inference.maxTokens = maxTokens;
  if (body.temperature !== undefined && body.temperature !== null) inference.temperature = body.temperature;
  if (body.top_p !== undefined && body.top_p !== null) inference.topP = body.top_p;
  if (body.stop !== undefined && body.stop !== null) {
    inference.stopSequences = stopSequences(body.stop);
  }

  const thinking = body.thinking;
  if (thinking?.type === 'enabled') {
    if (!mayBeAnthropicModel(model)) {
      throw new GatewayError(
        'unsupported_parameter',
        'thinking is supported on bedrock for Anthropic Claude models only',
        {
          param: 'thinking',
        },
      );
    }
    const budget = requireThinkingBudget(thinking);
    out.additionalModelRequestFields = { thinking: { type: 'enabled', budget_tokens: budget } };
    if (inference.maxTokens === undefined) inference.maxTokens = budget + THINKING_ANSWER_TOKENS;
  }
  if (Object.keys(inference).length > 0) out.inferenceConfig = inference;

  const prepared = prepareBedrockTools(body);
  const toolConfig = prepared && caching !== 'all' ? toolsWithoutCachePoints(prepared) : prepared;
  if (toolConfig) out.toolConfig = toolConfig;
  checkCachePoints(system, messages, toolConfig?.tools);
  applyResponseFormat(body, model, out);
  return out;
}

function applyResponseFormat(body: ChatCompletionRequest, model: string, out: Record<string, unknown>): void {
  const format = jsonResponseFormat(body);
  if (format?.type === 'json_schema') {
    const spec = format.json_schema;
    out.outputConfig = {
      textFormat: {
        type: 'json_schema',
        structure: {
          jsonSchema: {
            // Converse takes the schema as a JSON string
            schema: JSON.stringify(spec.schema),
            ...(spec.name ? { name: spec.name } : {}),
            ...(spec.description ? { description: spec.description } : {}),
          },
        },
      },
    };
  } else if (format?.type === 'json_object') {
    if (out.toolConfig) {
      throw new GatewayError(
        'unsupported_parameter',
        'response_format json_object cannot be combined with tools on bedrock; use json_schema',
        { param: 'response_format' },
      );
    }
    const support = toolChoiceSupport(model);
    if (support === 'none') {
      throw new GatewayError(
        'unsupported_parameter',
        `response_format json_object is carried on bedrock by a forced tool call, which ${model} does not take ` +
          '(only Anthropic Claude, Amazon Nova and Mistral Large do); use json_schema on a model with ' +
          'structured outputs, or ask for JSON in the prompt without response_format',
        { param: 'response_format' },
      );
    }
    out.toolConfig = {
      tools: [
        {
          toolSpec: {
            name: JSON_RESPONSE_TOOL_NAME,
            description: 'Respond with a JSON object.',
            inputSchema: { json: { type: 'object', additionalProperties: true } },
          },
        },
      ],
      // `any` with the json tool alone offered forces it as surely as naming it does.
      toolChoice: support === 'tool' ? { tool: { name: JSON_RESPONSE_TOOL_NAME } } : { any: {} },
    };
  }
}
