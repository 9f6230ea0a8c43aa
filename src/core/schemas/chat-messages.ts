/**
 * Chat messages: one shape per role, told apart by `role`, and the content parts each role may
 * carry. Parts and messages accept extra keys because providers read their own (`cache_control`).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Nullable } from './common-fields.js';

export const TextPartSchema = Type.Object({ type: Type.Literal('text'), text: Type.String() });

export const ImagePartSchema = Type.Object({
  type: Type.Literal('image_url'),
  image_url: Type.Object({
    url: Type.String({ minLength: 1, description: 'An image URL or a data: URL with base64 data.' }),
    detail: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('low'), Type.Literal('high')])),
  }),
});

export const AudioPartSchema = Type.Object({
  type: Type.Literal('input_audio'),
  input_audio: Type.Object({
    data: Type.String({ description: 'Base64 audio.' }),
    format: Type.Union([Type.Literal('wav'), Type.Literal('mp3')]),
  }),
});

export const FilePartSchema = Type.Object({
  type: Type.Literal('file'),
  file: Type.Object({
    filename: Type.Optional(Type.String()),
    file_data: Type.Optional(Type.String()),
    file_id: Type.Optional(Type.String()),
    file_url: Type.Optional(
      Type.String({
        description:
          "The gateway's own: a file by URL, which the gateway never fetches. Sent to providers that fetch " +
          'files themselves (Anthropic, Gemini, Vertex AI); refused by the others.',
      }),
    ),
  }),
});

export const RefusalPartSchema = Type.Object({ type: Type.Literal('refusal'), refusal: Type.String() });

/** Reasoning blocks a provider returned, sent back on the next turn so the model keeps its chain. */
export const ThinkingPartSchema = Type.Object({
  type: Type.Literal('thinking'),
  thinking: Type.String(),
  signature: Type.Optional(Type.String()),
});
export const RedactedThinkingPartSchema = Type.Object({
  type: Type.Literal('redacted_thinking'),
  data: Type.String(),
});

const NameField = Type.Optional(Type.String({ description: 'Optional participant name.' }));

export const UserContentPartSchema = Type.Union([
  TextPartSchema,
  ImagePartSchema,
  AudioPartSchema,
  FilePartSchema,
]);
export const AssistantContentPartSchema = Type.Union([
  TextPartSchema,
  RefusalPartSchema,
  ThinkingPartSchema,
  RedactedThinkingPartSchema,
]);

function content<T extends TSchema>(part: T) {
  return Type.Union([Type.String(), Type.Array(part, { minItems: 1 })]);
}

const TextOnlyContent = content(TextPartSchema);

export const SystemMessageSchema = Type.Object({
  role: Type.Literal('system'),
  content: TextOnlyContent,
  name: NameField,
});

export const DeveloperMessageSchema = Type.Object({
  role: Type.Literal('developer'),
  content: TextOnlyContent,
  name: NameField,
});

export const UserMessageSchema = Type.Object({
  role: Type.Literal('user'),
  content: content(UserContentPartSchema),
  name: NameField,
});

export const ToolCallSchema = Type.Object({
  id: Type.String(),
  type: Type.Literal('function'),
  function: Type.Object({ name: Type.String({ minLength: 1 }), arguments: Type.String() }),
});

/** `content` may be null or absent only when the message carries tool_calls or function_call. */
export const AssistantMessageSchema = Type.Object({
  role: Type.Literal('assistant'),
  content: Type.Optional(Nullable(content(AssistantContentPartSchema))),
  refusal: Type.Optional(Nullable(Type.String())),
  name: NameField,
  tool_calls: Type.Optional(Type.Array(ToolCallSchema)),
  function_call: Type.Optional(Nullable(Type.Object({ name: Type.String(), arguments: Type.String() }))),
  audio: Type.Optional(Nullable(Type.Object({ id: Type.String() }))),
});

export const ToolMessageSchema = Type.Object({
  role: Type.Literal('tool'),
  content: TextOnlyContent,
  tool_call_id: Type.String({ minLength: 1 }),
});

/** Deprecated together with `functions`. */
export const FunctionMessageSchema = Type.Object({
  role: Type.Literal('function'),
  content: Nullable(Type.String()),
  name: Type.String({ minLength: 1 }),
});

export const ChatMessageSchema = Type.Union([
  SystemMessageSchema,
  DeveloperMessageSchema,
  UserMessageSchema,
  AssistantMessageSchema,
  ToolMessageSchema,
  FunctionMessageSchema,
]);

export type ChatMessage = Static<typeof ChatMessageSchema>;
export type SystemMessage = Static<typeof SystemMessageSchema>;
export type DeveloperMessage = Static<typeof DeveloperMessageSchema>;
export type UserMessage = Static<typeof UserMessageSchema>;
export type AssistantMessage = Static<typeof AssistantMessageSchema>;
export type ToolMessage = Static<typeof ToolMessageSchema>;
export type FunctionMessage = Static<typeof FunctionMessageSchema>;
export type TextPart = Static<typeof TextPartSchema>;
export type UserContentPart = Static<typeof UserContentPartSchema>;
export type AssistantContentPart = Static<typeof AssistantContentPartSchema>;
