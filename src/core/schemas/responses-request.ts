/**
 * Body of POST /v1/responses (the OpenAI document's `CreateResponse`). Input items are checked for their
 * `type` / `role` and the fields the gateway reads to translate them; what else they carry passes through.
 * Unknown top-level keys pass through too: the translation reads only what it names.
 */
import { Type, type Static } from '@sinclair/typebox';
import { checkMetadataLimits } from '../metadata-limits.js';
import { fieldError } from '../validator/compile-validator.js';
import { checkStrictTools } from './strict-function-schema.js';
import { checkStrictResponseFormat } from './strict-response-format.js';
import {
  MetadataField,
  ModelField,
  Nullable,
  StreamField,
  TemperatureField,
  TopPField,
  UserField,
} from './common-fields.js';
import { compileRequestBodyValidator } from './request-body-validator.js';
import { checkMediaPart, InputFilePart, InputImagePart } from './responses-input-parts.js';
import { ResponsesToolsField } from './responses-tools.js';

const InputTextPart = Type.Object({ type: Type.Literal('input_text'), text: Type.String() });
const OutputTextPart = Type.Object({ type: Type.Literal('output_text'), text: Type.String() });
const RefusalPart = Type.Object({ type: Type.Literal('refusal'), refusal: Type.String() });
const MessageContent = Type.Union([
  Type.String(),
  Type.Array(Type.Union([InputTextPart, InputImagePart, InputFilePart, OutputTextPart, RefusalPart]), {
    minItems: 1,
  }),
]);

export const ResponseMessageItemSchema = Type.Object({
  type: Type.Optional(Type.Literal('message')),
  id: Type.Optional(Type.String()),
  role: Type.Union([
    Type.Literal('user'),
    Type.Literal('assistant'),
    Type.Literal('system'),
    Type.Literal('developer'),
  ]),
  content: MessageContent,
  status: Type.Optional(Type.String()),
});

export const FunctionCallItemSchema = Type.Object({
  type: Type.Literal('function_call'),
  id: Type.Optional(Type.String()),
  call_id: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1 }),
  arguments: Type.String(),
  status: Type.Optional(Type.String()),
});

export const FunctionCallOutputItemSchema = Type.Object({
  type: Type.Literal('function_call_output'),
  id: Type.Optional(Nullable(Type.String())),
  call_id: Type.String({ minLength: 1 }),
  output: Type.Union([Type.String(), Type.Array(Type.Object({ type: Type.String() }))]),
  status: Type.Optional(Nullable(Type.String())),
});

export const ReasoningItemSchema = Type.Object({
  type: Type.Literal('reasoning'),
  id: Type.Optional(Type.String()),
  summary: Type.Array(Type.Object({ type: Type.Literal('summary_text'), text: Type.String() })),
  content: Type.Optional(
    Type.Array(Type.Object({ type: Type.Literal('reasoning_text'), text: Type.String() })),
  ),
  encrypted_content: Type.Optional(Nullable(Type.String())),
  status: Type.Optional(Type.String()),
});

/**
 * Any other item (a built-in tool's call or output: `web_search_call`, `file_search_call`,
 * `computer_call_output`, `mcp_call` …; new kinds), passed on as it is: a native provider's answer holds
 * them, and a client sends them back with the rest of its output. Translation leaves them out
 * (to-chat-request.ts). The four kinds above are checked as themselves.
 */
export const OtherItemSchema = Type.Object({
  type: Type.String({
    minLength: 1,
    pattern: '^(?!(message|function_call|function_call_output|reasoning)$)',
  }),
  id: Type.Optional(Nullable(Type.String())),
});

/** The items the gateway reads and translates. */
const KnownInputItemSchema = Type.Union([
  ResponseMessageItemSchema,
  FunctionCallItemSchema,
  FunctionCallOutputItemSchema,
  ReasoningItemSchema,
]);

// Nested, so that an item of a known type is reported against its own schema (its `type` picks it).
export const ResponseInputItemSchema = Type.Union([KnownInputItemSchema, OtherItemSchema]);

/**
 * Any other tool choice (a built-in tool's: `{"type": "web_search_preview"}`; `allowed_tools`, `mcp`,
 * `custom`; new kinds), passed on as it is to a native provider; a translated target refuses it.
 */
const OtherToolChoiceSchema = Type.Object({ type: Type.String({ minLength: 1, pattern: '^(?!function$)' }) });

const TextFormatSchema = Type.Union([
  Type.Object({ type: Type.Literal('text') }),
  Type.Object({ type: Type.Literal('json_object') }),
  Type.Object({
    type: Type.Literal('json_schema'),
    name: Type.String({ minLength: 1, maxLength: 64 }),
    schema: Type.Record(Type.String(), Type.Unknown()),
    description: Type.Optional(Type.String()),
    strict: Type.Optional(Nullable(Type.Boolean())),
  }),
]);

export const INCLUDE_VALUES = [
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
] as const;

export const IncludeField = Nullable(
  Type.Array(Type.Union(INCLUDE_VALUES.map((value) => Type.Literal(value)))),
);

export const ResponsesRequestSchema = Type.Object(
  {
    model: ModelField,
    input: Type.Union([Type.String(), Type.Array(ResponseInputItemSchema)]),
    instructions: Type.Optional(Nullable(Type.String())),
    previous_response_id: Type.Optional(Nullable(Type.String({ minLength: 1 }))),
    metadata: Type.Optional(MetadataField),
    temperature: Type.Optional(TemperatureField),
    top_p: Type.Optional(TopPField),
    user: Type.Optional(UserField),
    reasoning: Type.Optional(
      Nullable(
        Type.Object({
          effort: Type.Optional(
            Nullable(
              Type.Union(
                ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'].map((value) =>
                  Type.Literal(value),
                ),
              ),
            ),
          ),
          summary: Type.Optional(Nullable(Type.String())),
          generate_summary: Type.Optional(Nullable(Type.String())),
        }),
      ),
    ),
    max_output_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 16 }))),
    text: Type.Optional(Nullable(Type.Object({ format: Type.Optional(TextFormatSchema) }))),
    tools: Type.Optional(ResponsesToolsField),
    tool_choice: Type.Optional(
      Type.Union([
        Type.Literal('none'),
        Type.Literal('auto'),
        Type.Literal('required'),
        Type.Object({ type: Type.Literal('function'), name: Type.String({ minLength: 1 }) }),
        OtherToolChoiceSchema,
      ]),
    ),
    truncation: Type.Optional(Nullable(Type.Union([Type.Literal('auto'), Type.Literal('disabled')]))),
    include: Type.Optional(IncludeField),
    parallel_tool_calls: Type.Optional(Nullable(Type.Boolean())),
    store: Type.Optional(Nullable(Type.Boolean())),
    stream: Type.Optional(StreamField),
    /** OpenAI's processing tier; the Response shows the one the provider says it served. */
    service_tier: Type.Optional(Nullable(Type.String())),
    prompt_cache_key: Type.Optional(Nullable(Type.String())),
    /** OpenAI's prompt cache retention (deprecated there for `prompt_cache_options.ttl`): shown on the Response. */
    prompt_cache_retention: Type.Optional(
      Nullable(Type.Union([Type.Literal('in_memory'), Type.Literal('24h')])),
    ),
    safety_identifier: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    top_logprobs: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 20 }))),
    /** Bounds the tool calls of one response (docs/responses.md: max_tool_calls); OpenAI refuses one under 1. */
    max_tool_calls: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    /** OpenAI's stored prompt template (its `variables`, `version` pass through): native providers only. */
    prompt: Type.Optional(Nullable(Type.Object({ id: Type.String({ minLength: 1 }) }))),
    /** Run by a job, the response answered at once `queued` (docs/responses.md, Background responses). */
    background: Type.Optional(Nullable(Type.Boolean())),
  },
  { $id: 'CreateResponseRequest', title: 'Create response request' },
);

export type ResponsesRequest = Static<typeof ResponsesRequestSchema>;
/** An input item of a kind the gateway reads: a message, a function call or its output, reasoning. */
export type ResponseInputItem = Static<typeof KnownInputItemSchema>;
/** An input item of any other kind, passed on as it is. */
export type OtherResponseItem = Static<typeof OtherItemSchema>;
export type ResponseMessageItem = Static<typeof ResponseMessageItemSchema>;
export type FunctionCallItem = Static<typeof FunctionCallItemSchema>;
export type FunctionCallOutputItem = Static<typeof FunctionCallOutputItemSchema>;
export type ReasoningItem = Static<typeof ReasoningItemSchema>;
export type ResponseIncludeValue = (typeof INCLUDE_VALUES)[number];

const validator = compileRequestBodyValidator(ResponsesRequestSchema);

function checkMediaParts(input: ReadonlyArray<Static<typeof ResponseInputItemSchema>>): void {
  input.forEach((item, i) => {
    if (!('content' in item) || !Array.isArray(item.content)) return;
    item.content.forEach((part: { type: string }, j: number) => {
      checkMediaPart(part, `input[${i}].content[${j}]`);
    });
  });
}

/** The names of the request's function tools, those grouped in a namespace too. */
function functionNames(tools: ResponsesRequest['tools']): Set<string> {
  const names = new Set<string>();
  type Named = { type: string; name?: unknown; tools?: Named[] };
  for (const tool of (tools ?? []) as Named[]) {
    const members = tool.type === 'namespace' ? (tool.tools ?? []) : [tool];
    for (const { type, name } of members) if (type === 'function') names.add(name as string);
  }
  return names;
}

/**
 * A choice that must call a tool needs the tool: OpenAI refuses `required` without tools ("Tool choice
 * 'required' must be specified with 'tools' parameter") and a function choice naming no function of the
 * request's tools. A translated target, whose chat request carries a choice only with its tools, would
 * answer without calling any.
 */
function checkToolChoice(request: ResponsesRequest): void {
  const choice = request.tool_choice;
  if (choice === 'required' && !request.tools?.length) {
    throw fieldError('invalid_body', 'tool_choice', "'required' needs tools to call: the request has none");
  }
  if (typeof choice === 'object' && choice.type === 'function' && 'name' in choice) {
    const { name } = choice as { name: string };
    if (!functionNames(request.tools).has(name)) {
      throw fieldError('invalid_body', 'tool_choice.name', `${name} is not the name of a function of tools`);
    }
  }
}

export function validateResponsesRequest(body: unknown): ResponsesRequest {
  const request = validator.assert(body);
  checkMetadataLimits(request.metadata);
  // OpenAI's conversation objects live at OpenAI: no provider would get the conversation's items.
  if ((request as { conversation?: unknown }).conversation != null) {
    throw fieldError(
      'unsupported_parameter',
      'conversation',
      'is not supported: the gateway continues a conversation by previous_response_id',
    );
  }
  // The ids of stored items are the gateway's, which no provider knows, and it sends items, never references.
  const reference = Array.isArray(request.input)
    ? request.input.findIndex((item) => item.type === 'item_reference')
    : -1;
  if (reference >= 0) {
    throw fieldError(
      'unsupported_parameter',
      `input[${reference}].type`,
      'item_reference is not supported: send the item itself, or continue by previous_response_id',
    );
  }
  if (Array.isArray(request.input) && request.input.length === 0 && !request.previous_response_id) {
    throw fieldError('invalid_body', 'input', 'must not be empty');
  }
  if (Array.isArray(request.input)) checkMediaParts(request.input);
  // Before any target: OpenAI refuses it, so a translated target must too.
  checkStrictTools(request.tools);
  checkToolChoice(request);
  const format = request.text?.format;
  if (format?.type === 'json_schema') checkStrictResponseFormat(format, 'text.format.schema');
  return request;
}
