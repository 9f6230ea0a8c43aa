/**
 * Body of POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages request, as Anthropic
 * documents it. Unknown top-level keys and unknown content-block types pass through to a provider that has
 * the API natively (Anthropic adds fields faster than a gateway is released); the translation to other
 * providers refuses what it cannot carry, naming it.
 */
import { Type, type Static } from '@sinclair/typebox';
import { checkCacheBreakpoints, messagesCacheBreakpoints } from '../cache-breakpoints.js';
import { fieldError } from '../validator/compile-validator.js';
import { ModelField, Nullable } from './common-fields.js';
import { compileRequestBodyValidator } from './request-body-validator.js';

const CacheControlField = Type.Object(
  { type: Type.Literal('ephemeral'), ttl: Type.Optional(Type.String()) },
  { description: 'Marks a prompt-caching breakpoint.' },
);

/** A content block: its `type` decides its other fields (checked by `checkContentBlock`). */
const ContentBlockSchema = Type.Object(
  { type: Type.String({ minLength: 1 }), cache_control: Type.Optional(Nullable(CacheControlField)) },
  { additionalProperties: true, description: 'text, image, document, tool_use, tool_result, thinking…' },
);

const MessageSchema = Type.Object({
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
  content: Type.Union([Type.String(), Type.Array(ContentBlockSchema)]),
});

/** A tool: a custom one (no `type`, or `custom`) has a name; Anthropic's own tools are told by their type,
 * and its toolsets have no name. */
const ToolSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    description: Type.Optional(Type.String()),
    input_schema: Type.Optional(Type.Object({}, { additionalProperties: true })),
    type: Type.Optional(Type.String()),
    cache_control: Type.Optional(Nullable(CacheControlField)),
    /** Strict tool use: the call's input follows `input_schema`. */
    strict: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);

const ToolChoiceSchema = Type.Object(
  {
    type: Type.Union([Type.Literal('auto'), Type.Literal('any'), Type.Literal('tool'), Type.Literal('none')]),
    name: Type.Optional(Type.String({ minLength: 1 })),
    disable_parallel_tool_use: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** `enabled` (with its budget), `disabled`, `adaptive`, `between_tools`, and whatever type Anthropic adds. */
const ThinkingSchema = Type.Object(
  {
    type: Type.String({ minLength: 1 }),
    budget_tokens: Type.Optional(Type.Integer({ minimum: 1024 })),
    /** `summarized` (the thinking's text), `omitted` (thinking blocks with empty text, the signature alone
     * carrying it), or a mode Anthropic adds. */
    display: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: true },
);

/** Structured outputs: the schema the answer's text follows. Other types pass through to the native APIs. */
const OutputFormatSchema = Type.Object(
  {
    type: Type.String({ minLength: 1 }),
    schema: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true },
);

/** What a count_tokens body has: the prompt, without the answer's settings. */
const promptFields = {
  model: ModelField,
  messages: Type.Array(MessageSchema, { minItems: 1 }),
  system: Type.Optional(Type.Union([Type.String(), Type.Array(ContentBlockSchema)])),
  tools: Type.Optional(Type.Array(ToolSchema)),
  tool_choice: Type.Optional(ToolChoiceSchema),
  thinking: Type.Optional(ThinkingSchema),
};

export const MessagesCountTokensRequestSchema = Type.Object(promptFields, {
  $id: 'MessagesCountTokensRequest',
  title: 'Anthropic Messages count_tokens request',
});

export const MessagesRequestSchema = Type.Object(
  {
    ...promptFields,
    max_tokens: Type.Integer({ minimum: 1 }),
    stop_sequences: Type.Optional(Type.Array(Type.String())),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 0 })),
    metadata: Type.Optional(
      Type.Object({ user_id: Type.Optional(Nullable(Type.String({ maxLength: 256 }))) }),
    ),
    stream: Type.Optional(Type.Boolean()),
    service_tier: Type.Optional(Type.String()),
    output_config: Type.Optional(
      Type.Object(
        {
          format: Type.Optional(Nullable(OutputFormatSchema)),
          effort: Type.Optional(Nullable(Type.String())),
        },
        { additionalProperties: true },
      ),
    ),
    /** Automatic prompt caching: a breakpoint on the last cacheable block, moving on as the turns grow. */
    cache_control: Type.Optional(Nullable(CacheControlField)),
    /** The structured-outputs beta's name for `output_config.format`. */
    output_format: Type.Optional(Nullable(OutputFormatSchema)),
  },
  { $id: 'MessagesRequest', title: 'Anthropic Messages request' },
);

export type MessagesRequest = Static<typeof MessagesRequestSchema>;
export type MessagesCountTokensRequest = Static<typeof MessagesCountTokensRequestSchema>;
export type MessagesMessage = Static<typeof MessageSchema>;
export type MessagesContentBlock = Static<typeof ContentBlockSchema> & Record<string, unknown>;
export type MessagesTool = Static<typeof ToolSchema>;

/** The fields each known block type must carry, by type. */
const REQUIRED_BLOCK_FIELDS: Record<string, Record<string, 'string' | 'object' | 'array|string'>> = {
  text: { text: 'string' },
  image: { source: 'object' },
  document: { source: 'object' },
  tool_use: { id: 'string', name: 'string', input: 'object' },
  tool_result: { tool_use_id: 'string' },
  thinking: { thinking: 'string', signature: 'string' },
  redacted_thinking: { data: 'string' },
};

/** A tool result's or a content document's content: a string, or content blocks (each checked as a
 * message's are). */
function checkNestedContent(content: unknown, path: string): void {
  if (content === undefined || typeof content === 'string') return;
  if (!Array.isArray(content)) {
    throw fieldError('invalid_body', path, 'must be a string or an array of content blocks');
  }
  content.forEach((block: unknown, k) => {
    if (typeof block !== 'object' || block === null || Array.isArray(block)) {
      throw fieldError('invalid_body', `${path}[${k}]`, 'must be a content block (an object)');
    }
    const { type } = block as Record<string, unknown>;
    if (typeof type !== 'string' || type === '') {
      throw fieldError('invalid_body', `${path}[${k}].type`, 'is required for a content block');
    }
    checkContentBlock(block as Record<string, unknown>, `${path}[${k}]`);
  });
}

function checkContentBlock(block: Record<string, unknown>, path: string): void {
  if (block.type === 'tool_result') checkNestedContent(block.content, `${path}.content`);
  const source = block.source as Record<string, unknown> | undefined;
  if (block.type === 'document' && source?.type === 'content') {
    checkNestedContent(source.content, `${path}.source.content`);
  }
  const required = REQUIRED_BLOCK_FIELDS[block.type as string];
  if (!required) return;
  for (const [field, kind] of Object.entries(required)) {
    const value = block[field];
    const ok =
      kind === 'string'
        ? typeof value === 'string'
        : kind === 'object'
          ? typeof value === 'object' && value !== null && !Array.isArray(value)
          : typeof value === 'string' || Array.isArray(value);
    if (!ok) {
      const article = /^[aeiou]/.test(String(block.type)) ? 'an' : 'a';
      throw fieldError('invalid_body', `${path}.${field}`, `is required for ${article} ${block.type} block`);
    }
  }
}

function checkPrompt(body: MessagesCountTokensRequest): void {
  const last = body.messages.length - 1;
  body.messages.forEach((message, i) => {
    // As Anthropic has it: only a final assistant message (a prefill the answer continues) may be empty.
    if (message.content.length === 0 && !(i === last && message.role === 'assistant')) {
      throw fieldError(
        'invalid_body',
        `messages[${i}].content`,
        'must not be empty (only the final assistant message may be)',
      );
    }
    if (typeof message.content === 'string') return;
    message.content.forEach((block, j) => checkContentBlock(block, `messages[${i}].content[${j}]`));
  });
  if (Array.isArray(body.system)) {
    body.system.forEach((block, j) => {
      if (block.type !== 'text') throw fieldError('invalid_body', `system[${j}].type`, 'must be text');
      checkContentBlock(block, `system[${j}]`);
    });
  }
  body.tools?.forEach((tool, i) => {
    if ((tool.type === undefined || tool.type === 'custom') && tool.name === undefined) {
      throw fieldError('invalid_body', `tools[${i}].name`, 'is required for a custom tool');
    }
  });
  if (body.tool_choice?.type === 'tool' && !body.tool_choice.name) {
    throw fieldError('invalid_body', 'tool_choice.name', 'is required when tool_choice.type is tool');
  }
  if (body.thinking?.type === 'enabled' && body.thinking.budget_tokens === undefined) {
    throw fieldError('invalid_body', 'thinking.budget_tokens', 'is required when thinking is enabled');
  }
  // Anthropic's limit on prompt-caching breakpoints, which Bedrock and Vertex AI keep too.
  checkCacheBreakpoints(messagesCacheBreakpoints(body));
}

const validator = compileRequestBodyValidator(MessagesRequestSchema);
const countValidator = compileRequestBodyValidator(MessagesCountTokensRequestSchema);

function checkOutputFormat(format: MessagesRequest['output_format'], param: string): void {
  if (format?.type === 'json_schema' && format.schema === undefined) {
    throw fieldError('invalid_body', `${param}.schema`, 'is required for a json_schema format');
  }
}

export function validateMessagesRequest(body: unknown): MessagesRequest {
  const request = validator.assert(body);
  checkPrompt(request);
  checkOutputFormat(request.output_config?.format, 'output_config.format');
  checkOutputFormat(request.output_format, 'output_format');
  // A thinking budget at or above max_tokens is not refused here: with interleaved thinking it is the
  // whole turn's and may exceed it, which only the provider, knowing the model and flags, can judge.
  return request;
}

export function validateMessagesCountTokensRequest(body: unknown): MessagesCountTokensRequest {
  const request = countValidator.assert(body);
  checkPrompt(request);
  return request;
}
