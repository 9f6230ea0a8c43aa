/** OpenAI chat request → Cohere v2 chat body. */
import { GatewayError } from '../../core/errors.js';
import type { ChatCompletionRequest, ResponseFormat } from '../../core/schemas/index.js';
import type { CohereChatBody } from './cohere-api-types.js';
import { COHERE_CHAT_PARAMETERS, assertParametersSupported } from './cohere-chat-parameters.js';
import { convertToCohereMessages } from './convert-to-cohere-messages.js';
import { prepareCohereTools } from './prepare-cohere-tools.js';

export function buildCohereChatBody(req: ChatCompletionRequest, stream: boolean): CohereChatBody {
  assertParametersSupported(req, COHERE_CHAT_PARAMETERS);
  const body: CohereChatBody = {
    model: req.model,
    messages: convertToCohereMessages(req.messages),
    ...prepareCohereTools(req.tools, req.tool_choice),
  };
  if (stream) body.stream = true;

  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (maxTokens !== undefined && maxTokens !== null) body.max_tokens = maxTokens;
  if (req.temperature !== undefined && req.temperature !== null) body.temperature = req.temperature;
  if (req.top_p !== undefined && req.top_p !== null) body.p = req.top_p;
  if (req.seed !== undefined && req.seed !== null) body.seed = req.seed;
  if (req.frequency_penalty !== undefined && req.frequency_penalty !== null) {
    body.frequency_penalty = req.frequency_penalty;
  }
  if (req.presence_penalty !== undefined && req.presence_penalty !== null)
    body.presence_penalty = req.presence_penalty;
  if (req.stop !== undefined && req.stop !== null) {
    const stops = typeof req.stop === 'string' ? [req.stop] : req.stop;
    if (stops.length > 0) body.stop_sequences = stops;
  }

  const format = responseFormat(req.response_format);
  if (format) body.response_format = format;

  const thinking = thinkingOption(req);
  if (thinking) body.thinking = thinking;
  return body;
}

function responseFormat(format: ResponseFormat | undefined): CohereChatBody['response_format'] {
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    const schema = format.json_schema?.schema;
    return schema ? { type: 'json_object', json_schema: schema } : { type: 'json_object' };
  }
  throw new GatewayError(
    'unsupported_parameter',
    `response_format \`${String((format as { type: unknown }).type)}\` is not supported for Cohere.`,
    {
      param: 'response_format',
    },
  );
}

function thinkingOption(req: ChatCompletionRequest): CohereChatBody['thinking'] {
  if (req.thinking) {
    if (req.thinking.type === 'disabled') return { type: 'disabled' };
    return req.thinking.budget_tokens !== undefined
      ? { type: 'enabled', token_budget: req.thinking.budget_tokens }
      : { type: 'enabled' };
  }
  const effort = req.reasoning_effort;
  if (typeof effort === 'string')
    return effort === 'none' || effort === 'minimal' ? { type: 'disabled' } : { type: 'enabled' };
  return undefined;
}
