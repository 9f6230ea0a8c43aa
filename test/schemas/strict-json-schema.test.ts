// OpenAI's rules for a strict schema (Structured Outputs, "Supported schemas"), checked where the body is
// validated: the supported keywords of each type, the root, the size limits. A strict Responses function
// tool here; every place a strict schema is checked uses the same rules (strict-json-schema.ts).
import { describe, expect, it } from 'vitest';
import { validateChatCompletionRequest } from '../../src/core/schemas/chat-completion-request.js';
import { validateResponsesRequest } from '../../src/core/schemas/responses-request.js';
import { effectiveStrict } from '../../src/core/schemas/strict-function-schema.js';
import { expectGatewayError } from './assert-rejects.js';

type Schema = Record<string, unknown>;

/** A closed object of these properties, each required. */
function closed(properties: Record<string, unknown>, extra: Schema = {}): Schema {
  return {
    type: 'object',
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
    ...extra,
  };
}

function strictTool(parameters: Schema): unknown {
  return { model: 'gpt-4o', input: 'Hi', tools: [{ type: 'function', name: 'f', parameters, strict: true }] };
}

/** The refusal's message after OpenAI's prefix. */
function refusal(parameters: Schema): string {
  const error = expectGatewayError(
    () => validateResponsesRequest(strictTool(parameters)),
    'invalid_function_parameters',
    'tools[0].parameters',
  );
  expect(error.message.startsWith("Invalid schema for function 'f': ")).toBe(true);
  return error.message.slice("Invalid schema for function 'f': ".length);
}

function accepts(parameters: Schema): void {
  expect(() => validateResponsesRequest(strictTool(parameters))).not.toThrow();
}

/** `count` properties named p0, p1, … of type string. */
function manyProperties(count: number): Record<string, unknown> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, { type: 'string' }]));
}

/** An object nesting `levels` objects, one in the other, under property `a`; a string at the bottom. */
function nested(levels: number): Schema {
  let schema: Schema = { type: 'string' };
  for (let i = 0; i < levels; i++) schema = closed({ a: schema });
  return schema;
}

describe('strict schemas: what OpenAI takes', () => {
  it('takes the supported keywords of each type, definitions, references and recursion', () => {
    accepts(
      closed(
        {
          email: { type: 'string', format: 'email', pattern: '^.+@.+$', minLength: 3, maxLength: 99 },
          score: { type: 'number', minimum: 0, exclusiveMaximum: 10, multipleOf: 0.5 },
          count: { type: 'integer', maximum: 5, exclusiveMinimum: 0, description: 'How many' },
          tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 },
          unit: { type: ['string', 'null'], enum: ['C', 'F', null], title: 'Unit', default: 'C' },
          kind: { type: 'string', const: 'x' },
          step: { $ref: '#/$defs/step', description: 'The next step' },
          either: { anyOf: [{ type: 'string' }, { type: 'null' }] },
          children: { type: 'array', items: { $ref: '#' } },
        },
        { $defs: { step: closed({ explanation: { type: 'string' }, next: { $ref: '#/$defs/step' } }) } },
      ),
    );
  });

  it.each(['allOf', 'oneOf', 'not', 'if', 'dependentRequired', 'dependentSchemas'])(
    'refuses %s wherever it is',
    (keyword) => {
      const member = keyword.startsWith('dependent') ? {} : [{ type: 'string' }];
      const value = keyword === 'allOf' || keyword === 'oneOf' ? member : { type: 'string' };
      expect(refusal(closed({ x: { type: 'string', [keyword]: value } }))).toBe(
        `In context=('properties', 'x'), '${keyword}' is not permitted.`,
      );
    },
  );

  it('refuses the validation keywords of a type strict mode does not list, and those of another type', () => {
    expect(refusal(closed({ tags: { type: 'array', items: { type: 'string' }, uniqueItems: true } }))).toBe(
      "In context=('properties', 'tags'), 'uniqueItems' is not permitted.",
    );
    expect(refusal(closed({ n: { type: 'string', minimum: 1 } }))).toBe(
      "In context=('properties', 'n'), 'minimum' is not permitted.",
    );
    expect(refusal(closed({}, { minProperties: 1 }))).toBe(
      "In context=(), 'minProperties' is not permitted.",
    );
  });

  it('refuses a format strict mode does not know, and a schema without a type', () => {
    expect(refusal(closed({ site: { type: 'array', items: { type: 'string', format: 'uri' } } }))).toBe(
      "In context=('properties', 'site', 'items'), 'uri' is not a valid format.",
    );
    expect(refusal(closed({ any: { description: 'Anything' } }))).toBe(
      "In context=('properties', 'any'), schema must have a 'type' key.",
    );
    expect(refusal(closed({ kind: { const: 'fact' } }))).toBe(
      "In context=('properties', 'kind'), schema must have a 'type' key.",
    );
  });

  it('checks the schemas of definitions and of union members', () => {
    expect(refusal(closed({ s: { $ref: '#/$defs/s' } }, { $defs: { s: { type: 'object' } } }))).toBe(
      "In context=('$defs', 's'), 'additionalProperties' is required to be supplied and to be false.",
    );
    expect(refusal(closed({ u: { anyOf: [{ type: 'null' }, { type: 'string', oneOf: [] }] } }))).toBe(
      "In context=('properties', 'u', 'anyOf', 1), 'oneOf' is not permitted.",
    );
  });

  it('refuses a root that is a union', () => {
    expect(refusal({ type: 'object', anyOf: [closed({ a: { type: 'string' } })] })).toBe(
      "In context=(), the root schema must not be 'anyOf'.",
    );
    expect(refusal({ anyOf: [closed({ a: { type: 'string' } })] })).toBe(
      `schema must be a JSON Schema of 'type: "object"', got 'type: "None"'.`,
    );
  });

  it('takes 5000 object properties in all and 10 levels of nesting, not more', () => {
    accepts(closed({ a: closed(manyProperties(2500)), b: closed(manyProperties(2498)) }));
    expect(refusal(closed({ a: closed(manyProperties(2500)), b: closed(manyProperties(2499)) }))).toBe(
      '5001 parameters exceeds limit of 5000.',
    );
    accepts(nested(10));
    expect(refusal(nested(11))).toBe('11 levels of nesting exceeds limit of 10.');
    // A reference counts as the schema it names, where it is used.
    const deep = closed({ a: { $ref: '#/$defs/deep' } }, { $defs: { deep: nested(10) } });
    expect(refusal(deep)).toBe('11 levels of nesting exceeds limit of 10.');
  });

  it('takes 1000 enum values in all, not more', () => {
    const values = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    accepts(
      closed({
        a: { type: 'string', enum: values(200, 'a') },
        b: { type: 'string', enum: values(800, 'b') },
      }),
    );
    expect(
      refusal(
        closed({
          a: { type: 'string', enum: values(200, 'a') },
          b: { type: 'string', enum: values(801, 'b') },
        }),
      ),
    ).toBe('1001 enum values exceeds limit of 1000.');
  });

  it('holds an enum of more than 250 string values to 15,000 characters', () => {
    const values = (n: number, length: number) =>
      Array.from({ length: n }, (_, i) => String(i).padEnd(length, 'x'));
    // 250 values of 100 characters: not a large enum, whatever its length.
    accepts(closed({ e: { type: 'string', enum: values(250, 100) } }));
    accepts(closed({ e: { type: 'string', enum: values(251, 59) } }));
    expect(refusal(closed({ e: { type: 'string', enum: values(251, 60) } }))).toBe(
      "In context=('properties', 'e'), enum of 251 values has a total string length of 15060, which exceeds " +
        'the limit of 15000 for an enum of more than 250 values.',
    );
  });

  it('holds property names, definition names, enum and const values to 120,000 characters in all', () => {
    const long = (c: string) => c.repeat(40_000);
    const schema = (constLength: number) =>
      closed(
        {
          [long('p')]: { type: 'string', enum: [long('e')] },
          c: { type: 'string', const: 'k'.repeat(constLength) },
        },
        { $defs: { [long('d').slice(1)]: { type: 'string' } } },
      );
    // 40,000 + 40,000 + 39,999 + 1 (the property c) + the const.
    accepts(schema(0));
    expect(refusal(schema(1))).toBe(
      '120001 characters of property names, definition names, enum values and const values exceeds limit of 120000.',
    );
  });

  it('runs a Responses tool without strict non-strict when its schema breaks one of these rules', () => {
    const parameters = closed({ kind: { type: 'string', oneOf: [{ const: 'a' }] } });
    expect(effectiveStrict({ name: 'f', parameters })).toBe(false);
    expect(effectiveStrict({ name: 'f', parameters: closed({ kind: { type: 'string' } }) })).toBe(true);
  });
});

describe('strict schemas: every place one is checked', () => {
  const broken = closed({ kind: { type: 'string', oneOf: [{ type: 'string' }] } });
  const problem = "In context=('properties', 'kind'), 'oneOf' is not permitted.";
  const chat = (extra: Schema) => ({
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'Hi' }],
    ...extra,
  });
  const chatTool = (strict?: boolean) => ({
    tools: [
      { type: 'function', function: { name: 'ok', parameters: closed({}), strict: true } },
      {
        type: 'function',
        function: { name: 'f', parameters: broken, ...(strict !== undefined && { strict }) },
      },
    ],
  });
  const chatFormat = (strict?: boolean) => ({
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'answer', schema: broken, ...(strict !== undefined && { strict }) },
    },
  });
  const responsesFormat = (strict?: boolean) => ({
    text: {
      format: {
        type: 'json_schema',
        name: 'answer',
        schema: broken,
        ...(strict !== undefined && { strict }),
      },
    },
  });

  it('a strict chat function tool', () => {
    const error = expectGatewayError(
      () => validateChatCompletionRequest(chat(chatTool(true))),
      'invalid_function_parameters',
      'tools[1].function.parameters',
    );
    expect(error.message).toBe(`Invalid schema for function 'f': ${problem}`);
    // On chat a tool is strict only when it says so.
    for (const strict of [false, undefined])
      expect(() => validateChatCompletionRequest(chat(chatTool(strict)))).not.toThrow();
  });

  it("a strict chat response format, named as OpenAI's answer names it", () => {
    const error = expectGatewayError(
      () => validateChatCompletionRequest(chat(chatFormat(true))),
      'invalid_json_schema',
      'response_format',
    );
    expect(error.message).toBe(`Invalid schema for response_format 'answer': ${problem}`);
    expect(error.type).toBe('invalid_request_error');
    for (const strict of [false, undefined])
      expect(() => validateChatCompletionRequest(chat(chatFormat(strict)))).not.toThrow();
    const open = {
      type: 'json_schema',
      json_schema: { name: 'a', strict: true, schema: { type: 'object' } },
    };
    expect(
      expectGatewayError(
        () => validateChatCompletionRequest(chat({ response_format: open })),
        'invalid_json_schema',
        'response_format',
      ).message,
    ).toBe(
      "Invalid schema for response_format 'a': In context=(), 'additionalProperties' is required to be supplied and to be false.",
    );
  });

  it("a strict Responses text format, named as OpenAI's answer names it", () => {
    const body = { model: 'gpt-4o', input: 'Hi', ...responsesFormat(true) };
    const error = expectGatewayError(
      () => validateResponsesRequest(body),
      'invalid_json_schema',
      'text.format.schema',
    );
    expect(error.message).toBe(`Invalid schema for response_format 'answer': ${problem}`);
    for (const strict of [false, undefined]) {
      expect(() =>
        validateResponsesRequest({ model: 'gpt-4o', input: 'Hi', ...responsesFormat(strict) }),
      ).not.toThrow();
    }
  });
});
