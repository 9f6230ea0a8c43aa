import { GatewayError } from '../../core/errors.js';
import type { ChatCompletionRequest, ResponseFormat, ThinkingOption } from '../../core/schemas/index.js';

type JsonSchemaSpec = Extract<ResponseFormat, { type: 'json_schema' }>['json_schema'];

/** A `response_format` that asks for JSON, checked: a json_schema always carries its schema. */
export type JsonResponseFormat =
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: JsonSchemaSpec & { schema: Record<string, unknown> } };

/**
 * The JSON `response_format` of a chat request, or undefined when there is none or it is `text`. A
 * json_schema without its schema and any other type are refused.
 */
export function jsonResponseFormat(body: ChatCompletionRequest): JsonResponseFormat | undefined {
  const format = body.response_format;
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_schema') {
    if (!format.json_schema?.schema) {
      throw new GatewayError('invalid_body', 'response_format.json_schema.schema is required', {
        param: 'response_format.json_schema.schema',
      });
    }
    return format as JsonResponseFormat;
  }
  if (format.type === 'json_object') return format;
  throw new GatewayError(
    'unsupported_parameter',
    `response_format type '${String((format as { type: unknown }).type)}' is not supported`,
    { param: 'response_format' },
  );
}

/**
 * true when the request asked for json_object from a provider that has no schema-free JSON mode and
 * answers through a forced `json` tool instead: that tool call is then the answer, not a real call.
 */
export function usesJsonResponseTool(body: ChatCompletionRequest): boolean {
  return body.response_format?.type === 'json_object';
}

/** The `budget_tokens` of enabled thinking, which providers with a thinking budget require. */
export function requireThinkingBudget(thinking: Extract<ThinkingOption, { type: 'enabled' }>): number {
  const budget = thinking.budget_tokens;
  if (typeof budget !== 'number' || !Number.isInteger(budget)) {
    throw new GatewayError('invalid_body', 'thinking.budget_tokens is required when thinking is enabled', {
      param: 'thinking.budget_tokens',
    });
  }
  return budget;
}

/** OpenAI's `stop` (one string or several) as the list of stop sequences. */
export function stopSequences(stop: string | string[]): string[] {
  return typeof stop === 'string' ? [stop] : stop;
}
