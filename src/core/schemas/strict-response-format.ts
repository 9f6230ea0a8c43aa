/**
 * A strict `json_schema` response format: chat's `response_format.json_schema`, the Responses API's
 * `text.format`. Its schema is held to strict mode's rules (strict-json-schema.ts) when the body is
 * validated, so a translated target refuses what OpenAI refuses. OpenAI answers `Invalid schema for
 * response_format 'name': …`, code `invalid_json_schema` with param `text.format.schema` on the Responses
 * API; on chat with param `response_format` and no code, where the gateway gives the same code, as every
 * error of its own has one.
 */
import { GatewayError } from '../errors.js';
import { strictSchemaProblem } from './strict-json-schema.js';

export interface JsonSchemaFormatFields {
  name: string;
  schema?: Record<string, unknown>;
  strict?: boolean | null;
}

export function checkStrictResponseFormat(format: JsonSchemaFormatFields | undefined, param: string): void {
  if (format?.strict !== true || format.schema === undefined) return;
  const problem = strictSchemaProblem(format.schema);
  if (problem === undefined) return;
  throw new GatewayError(
    'invalid_json_schema',
    `Invalid schema for response_format '${format.name}': ${problem}`,
    {
      param,
    },
  );
}
