/**
 * The answers of /v1/messages and /v1/messages/count_tokens as the OpenAPI document describes them:
 * Anthropic's Message object, its count, and its error object (core/messages-types.ts has their types).
 */
import { Type } from '@sinclair/typebox';

const UsageSchema = Type.Object({
  input_tokens: Type.Integer({ minimum: 0 }),
  output_tokens: Type.Integer({ minimum: 0 }),
  cache_creation_input_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
  cache_read_input_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
  cache_creation: Type.Optional(
    Type.Union([
      Type.Object({
        ephemeral_5m_input_tokens: Type.Integer({ minimum: 0 }),
        ephemeral_1h_input_tokens: Type.Integer({ minimum: 0 }),
      }),
      Type.Null(),
    ]),
  ),
});

export const MessagesAnswerSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('message'),
    role: Type.Literal('assistant'),
    model: Type.String(),
    content: Type.Array(
      Type.Object(
        {
          type: Type.String({
            description: 'text, thinking, redacted_thinking, tool_use, or a server block',
          }),
        },
        { additionalProperties: true },
      ),
    ),
    stop_reason: Type.Union([Type.String(), Type.Null()]),
    stop_sequence: Type.Union([Type.String(), Type.Null()]),
    usage: UsageSchema,
  },
  { title: 'Anthropic Message', additionalProperties: true },
);

export const MessagesCountTokensAnswerSchema = Type.Object(
  { input_tokens: Type.Integer({ minimum: 0 }) },
  { title: 'Anthropic token count' },
);

export const MessagesErrorSchema = Type.Object(
  {
    type: Type.Literal('error'),
    error: Type.Object({ type: Type.String(), message: Type.String() }),
  },
  { title: 'Anthropic error' },
);
