/**
 * Tool-calling, structured-output and reasoning options of a chat request.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from './common-fields.js';

const JsonSchemaObject = Type.Object({}, { description: 'A JSON Schema object.' });

export const FunctionDefinitionSchema = Type.Object({
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  parameters: Type.Optional(JsonSchemaObject),
  strict: Type.Optional(Nullable(Type.Boolean())),
});

export const ToolSchema = Type.Object({
  type: Type.Literal('function'),
  function: FunctionDefinitionSchema,
});

export const ToolsField = Type.Array(ToolSchema, {
  maxItems: 128,
  description: 'Only functions; at most 128.',
});

export const ToolChoiceField = Type.Union([
  Type.Literal('none'),
  Type.Literal('auto'),
  Type.Literal('required'),
  Type.Object({
    type: Type.Literal('function'),
    function: Type.Object({ name: Type.String({ minLength: 1 }) }),
  }),
  Type.Object({
    type: Type.Literal('allowed_tools'),
    allowed_tools: Type.Object({
      mode: Type.Union([Type.Literal('auto'), Type.Literal('required')]),
      tools: Type.Array(Type.Object({})),
    }),
  }),
]);

/** Deprecated form of tools. */
export const FunctionsField = Type.Array(
  Type.Object({
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    parameters: Type.Optional(JsonSchemaObject),
  }),
  { minItems: 1, maxItems: 128 },
);

/** Deprecated form of tool_choice. */
export const FunctionCallField = Type.Union([
  Type.Literal('none'),
  Type.Literal('auto'),
  Type.Object({ name: Type.String({ minLength: 1 }) }),
]);

export const ResponseFormatField = Type.Union([
  Type.Object({ type: Type.Literal('text') }),
  Type.Object({ type: Type.Literal('json_object') }),
  Type.Object({
    type: Type.Literal('json_schema'),
    json_schema: Type.Object({
      name: Type.String({ minLength: 1 }),
      description: Type.Optional(Type.String()),
      schema: Type.Optional(JsonSchemaObject),
      strict: Type.Optional(Nullable(Type.Boolean())),
    }),
  }),
]);

/**
 * The reasoning-content option. Whether it may be used at all depends on the config's
 * `strict_compat_compliance`, which the pipeline checks.
 */
export const ThinkingField = Type.Union([
  Type.Object({
    type: Type.Literal('enabled'),
    budget_tokens: Type.Integer({ minimum: 1024, description: 'Tokens the model may spend reasoning.' }),
  }),
  Type.Object({ type: Type.Literal('disabled') }),
]);

export type Tool = Static<typeof ToolSchema>;
export type ToolChoice = Static<typeof ToolChoiceField>;
export type ResponseFormat = Static<typeof ResponseFormatField>;
export type ThinkingOption = Static<typeof ThinkingField>;
