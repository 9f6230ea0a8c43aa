/**
 * `default.jsonSchema` {schema}: passes when the JSON the text carries (json-in-text.ts: the whole text, a
 * fenced block, or the braces' span) is valid against the schema. With several candidates, one valid
 * is enough. No JSON in the text fails. `data` gives the first validation error's path and message.
 */
import { Type } from '@sinclair/typebox';
import { checkedText, defineCheck } from '../built-in-check.js';
import { jsonValuesIn } from './json-in-text.js';
import { compileJsonSchema, describeSchemaError } from './json-schema-compiler.js';

export const jsonSchema = defineCheck({
  id: 'jsonSchema',
  parameters: Type.Object(
    { schema: Type.Object({}, { description: 'A JSON Schema (draft 2020-12, or draft-07 by $schema).' }) },
    { additionalProperties: false },
  ),
  refine({ schema }) {
    try {
      compileJsonSchema(schema);
      return null;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { param: 'parameters.schema', message: `is not a usable JSON Schema: ${reason}` };
    }
  },
  run(ctx, { schema }) {
    const validate = compileJsonSchema(schema);
    const candidates = jsonValuesIn(checkedText(ctx));
    if (candidates.length === 0) {
      return { verdict: false, explanation: 'The text holds no JSON.', data: { found: false } };
    }
    let firstError: { path: string; message: string } | null = null;
    for (const candidate of candidates) {
      if (validate(candidate)) {
        return {
          verdict: true,
          explanation: 'The JSON in the text is valid against the schema.',
          data: { found: true },
        };
      }
      firstError ??= validate.errors?.[0] !== undefined ? describeSchemaError(validate.errors[0]) : null;
    }
    return {
      verdict: false,
      explanation: `The JSON in the text is not valid against the schema${firstError === null ? '' : `: ${firstError.path} ${firstError.message}`}.`,
      data: { found: true, error: firstError },
    };
  },
});
