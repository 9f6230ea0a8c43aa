import { GatewayError } from '../../core/errors.js';
import type { ChatCompletionRequest } from '../../core/schemas/index.js';
import { jsonResponseFormat, requireThinkingBudget, stopSequences } from '../shared/chat-request-fields.js';
import { refuseUnsupportedParameters } from '../shared/unsupported-parameters.js';
import { JSON_RESPONSE_TOOL_NAME, THINKING_ANSWER_TOKENS } from './bedrock-config.js';
import { prepareBedrockTools } from './bedrock-prepare-tools.js';
import { convertToBedrockMessages } from './convert-to-bedrock-messages.js';

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
 * ARNs that name no model (an application inference profile, a provisioned or custom model, an imported one):
 * what runs behind them is only known to Bedrock.
 */
const OPAQUE_MODEL_ARN =
  /^arn:aws[a-z-]*:bedrock:[^:]*:\d*:(application-inference-profile|provisioned-model|custom-model|custom-model-deployment|imported-model)\//;

/**
 * Extended thinking through Converse is Anthropic's own request field, so only Claude models take it; a model
 * id that does not say which model it runs gets it too, and Bedrock refuses it if that is not Claude.
 */
function mayBeAnthropicModel(modelId: string): boolean {
  return (
    /(^|\.)anthropic\./.test(modelId) ||
    modelId.includes('anthropic.claude') ||
    OPAQUE_MODEL_ARN.test(modelId)
  );
}

/** The Converse / ConverseStream request body (the model id goes in the URL). */
export function toBedrockConverseBody(body: ChatCompletionRequest): Record<string, unknown> {
  refuseUnsupportedParameters(body, BEDROCK_UNSUPPORTED_PARAMETERS, 'bedrock');
  const { system, messages } = convertToBedrockMessages(body.messages ?? []);
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
    if (!mayBeAnthropicModel(String(body.model))) {
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

  const toolConfig = prepareBedrockTools(body);
  if (toolConfig) out.toolConfig = toolConfig;
  applyResponseFormat(body, out);
  return out;
}

function applyResponseFormat(body: ChatCompletionRequest, out: Record<string, unknown>): void {
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
      toolChoice: { tool: { name: JSON_RESPONSE_TOOL_NAME } },
    };
  }
}
