import { GatewayError } from '../../core/errors.js';
import type { ChatCompletionRequest } from '../../core/schemas/index.js';
import type { GeminiGenerateContentRequest, GeminiGenerationConfig } from './google-api-types.js';
import { convertJsonSchemaToGoogleSchema } from './convert-json-schema-to-google-schema.js';
import { convertToGoogleMessages } from './convert-to-google-messages.js';
import { prepareGoogleTools } from './google-prepare-tools.js';
import { geminiThinkingConfig } from './google-thinking-config.js';

export interface GoogleRequestOptions {
  /** Adapter id named in errors (`google`, `vertex-ai`). */
  provider: string;
  /** true: no thought parts are asked for, since the answer could not carry them. */
  strictCompat: boolean;
}

/**
 * An OpenAI chat request → the body of Gemini's `generateContent` / `streamGenerateContent`
 * (the model goes in the URL). Parameters Gemini cannot honour are refused with a 400 naming them;
 * the few that are dropped are listed in the capabilities.
 */
export function toGeminiRequestBody(
  body: ChatCompletionRequest,
  options: GoogleRequestOptions,
): GeminiGenerateContentRequest {
  refuseUnsupported(body, options.provider);
  const { systemInstruction, contents } = convertToGoogleMessages(body.messages, body.model);
  const request: GeminiGenerateContentRequest = { contents };
  if (systemInstruction) request.systemInstruction = systemInstruction;
  const { tools, toolConfig } = prepareGoogleTools(body);
  if (tools) request.tools = tools;
  if (toolConfig) request.toolConfig = toolConfig;
  const generationConfig = toGenerationConfig(body, options);
  if (Object.keys(generationConfig).length > 0) request.generationConfig = generationConfig;
  return request;
}

function toGenerationConfig(
  body: ChatCompletionRequest,
  options: GoogleRequestOptions,
): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === 'number') config.maxOutputTokens = maxTokens;
  if (typeof body.temperature === 'number') config.temperature = body.temperature;
  if (typeof body.top_p === 'number') config.topP = body.top_p;
  if (typeof body.seed === 'number') config.seed = body.seed;
  if (typeof body.n === 'number' && body.n !== 1) config.candidateCount = body.n;
  if (typeof body.presence_penalty === 'number') config.presencePenalty = body.presence_penalty;
  if (typeof body.frequency_penalty === 'number') config.frequencyPenalty = body.frequency_penalty;
  if (typeof body.stop === 'string') config.stopSequences = [body.stop];
  else if (Array.isArray(body.stop) && body.stop.length > 0) config.stopSequences = body.stop;

  const format = body.response_format;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  else if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    const schema = convertJsonSchemaToGoogleSchema(format.json_schema?.schema);
    if (schema) config.responseSchema = schema;
  } else if (format !== undefined && format.type !== 'text') {
    const type = String((format as { type: unknown }).type);
    throw new GatewayError(
      'unsupported_parameter',
      `response_format type ${type} is not supported by ${options.provider}`,
      {
        param: 'response_format',
      },
    );
  }

  const thinkingConfig = geminiThinkingConfig(body, body.model, options.strictCompat);
  if (thinkingConfig) config.thinkingConfig = thinkingConfig;
  return config;
}

function refuseUnsupported(body: ChatCompletionRequest, provider: string): void {
  if (body.logit_bias && Object.keys(body.logit_bias).length > 0) {
    throw new GatewayError('unsupported_parameter', `logit_bias is not supported by ${provider}`, {
      param: 'logit_bias',
    });
  }
  if (body.logprobs === true) {
    throw new GatewayError('unsupported_parameter', `logprobs is not supported by ${provider}`, {
      param: 'logprobs',
    });
  }
  if (typeof body.top_logprobs === 'number' && body.top_logprobs > 0) {
    throw new GatewayError('unsupported_parameter', `top_logprobs is not supported by ${provider}`, {
      param: 'top_logprobs',
    });
  }
  const modalities = body.modalities;
  if (Array.isArray(modalities) && modalities.some((m) => m !== 'text')) {
    throw new GatewayError(
      'unsupported_parameter',
      `modalities other than text are not supported by ${provider}`,
      {
        param: 'modalities',
      },
    );
  }
}
