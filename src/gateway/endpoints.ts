/**
 * The endpoint registry: one descriptor per model operation — its path, the schema that validates its
 * body (and gives its type and its OpenAPI entry), and whether it streams. Routes, the OpenAPI document,
 * the check of a config's override_params and (later) batch lines read the operation from here; each
 * provider adapter has a handler per operation (providers/types.ts `operations`).
 */
import type { Operation } from '../core/operation.js';
import {
  ChatCompletionRequestSchema,
  CompletionRequestSchema,
  EmbeddingRequestSchema,
  MessagesCountTokensRequestSchema,
  MessagesRequestSchema,
  validateChatCompletionRequest,
  validateCompletionRequest,
  validateEmbeddingRequest,
  validateMessagesCountTokensRequest,
  validateMessagesRequest,
} from '../core/schemas/index.js';
import {
  MessagesAnswerSchema,
  MessagesCountTokensAnswerSchema,
  MessagesErrorSchema,
} from '../core/schemas/messages-answer.js';
import { ResponsesRequestSchema, validateResponsesRequest } from '../core/schemas/responses-request.js';
import type { EndpointKind, ModelRequest, RequestBody } from '../providers/types.js';

export interface EndpointDescriptor<K extends EndpointKind = EndpointKind> {
  kind: K;
  /** Under /v1. */
  path: string;
  /** Validates a body (throws invalid_body naming the field) and returns it typed. */
  validate(body: unknown): RequestBody<K>;
  /** Whether `stream: true` asks for server-sent events. */
  streams: boolean;
  /** Whose API the endpoint is: OpenAI's (the gateway's `thinking` is an extension, refused in strict
   * mode; a stream's usage is asked with `stream_options`) or Anthropic's (`thinking` is its own field;
   * a stream always reports usage). */
  api: 'openai' | 'anthropic';
  /** The body fields its schema names. */
  fields: ReadonlySet<string>;
  openapi: Operation;
}

function descriptor<K extends EndpointKind>(
  kind: K,
  path: string,
  validate: (body: unknown) => RequestBody<K>,
  schema: unknown,
  summary: string,
  streams: boolean,
): EndpointDescriptor<K> {
  return {
    kind,
    path,
    validate,
    streams,
    api: 'openai',
    fields: new Set(Object.keys((schema as { properties?: object }).properties ?? {})),
    openapi: {
      method: 'post',
      path,
      summary,
      tags: ['Models'],
      requestBody: schema,
      otherResponses: HOOK_RESPONSES,
    },
  };
}

/** What a config's hooks and guardrails add to every model endpoint (docs/guardrails.md, "Outcomes"). */
const HOOK_RESPONSES: NonNullable<Operation['otherResponses']> = {
  '246': {
    description:
      'The answer, although a hook failed without denying; `hook_results` (beside the answer, or in the first chunk of a stream) says which',
  },
  '446': {
    description: 'A hook that denies failed: no answer is given; `hook_results` says which',
    schema: { $ref: '#/components/schemas/HooksFailed' },
  },
};

/** Anthropic's API answers in its own shapes: its answer, and its error object for every failure. */
function anthropicShaped<K extends EndpointKind>(
  endpoint: EndpointDescriptor<K>,
  response: unknown,
): EndpointDescriptor<K> {
  const error = { description: "Anthropic's error object", schema: MessagesErrorSchema };
  const { openapi } = endpoint;
  return {
    ...endpoint,
    api: 'anthropic',
    openapi: {
      ...openapi,
      tags: ['Anthropic Messages'],
      response,
      otherResponses: {
        ...openapi.otherResponses,
        '446': { ...HOOK_RESPONSES['446'], schema: MessagesErrorSchema },
        '4XX': error,
        '5XX': error,
      },
    },
  };
}

export const ENDPOINTS: { readonly [K in EndpointKind]: EndpointDescriptor<K> } = {
  chat: descriptor(
    'chat',
    '/chat/completions',
    validateChatCompletionRequest,
    ChatCompletionRequestSchema,
    'Create a chat completion (JSON, or server-sent events with stream: true)',
    true,
  ),
  completions: descriptor(
    'completions',
    '/completions',
    validateCompletionRequest,
    CompletionRequestSchema,
    'Create a text completion',
    true,
  ),
  embeddings: descriptor(
    'embeddings',
    '/embeddings',
    validateEmbeddingRequest,
    EmbeddingRequestSchema,
    'Create embeddings',
    false,
  ),
  messages: anthropicShaped(
    descriptor(
      'messages',
      '/messages',
      validateMessagesRequest,
      MessagesRequestSchema,
      "Create a message in Anthropic's Messages API (JSON, or server-sent events with stream: true); " +
        'native on Anthropic, Bedrock and Vertex AI Claude models, translated for every other provider',
      true,
    ),
    MessagesAnswerSchema,
  ),
  count_tokens: anthropicShaped(
    descriptor(
      'count_tokens',
      '/messages/count_tokens',
      validateMessagesCountTokensRequest,
      MessagesCountTokensRequestSchema,
      "Count the input tokens of an Anthropic Messages request (Anthropic's own count, else an estimate)",
      false,
    ),
    MessagesCountTokensAnswerSchema,
  ),
  responses: inResponsesTag(
    descriptor(
      'responses',
      '/responses',
      validateResponsesRequest,
      ResponsesRequestSchema,
      'Create a model response (the Response object, or its server-sent events with stream: true); any ' +
        'chat-capable provider — native on OpenAI and Azure OpenAI, translated for every other —, the ' +
        'conversation continued with previous_response_id',
      true,
    ),
  ),
};

/** The Responses API's operations are listed together; its route is its own (server/routes/responses.ts:
 * it stores the response and rebuilds conversations), the descriptor gives the pipeline its operation. */
function inResponsesTag<K extends EndpointKind>(endpoint: EndpointDescriptor<K>): EndpointDescriptor<K> {
  return { ...endpoint, openapi: { ...endpoint.openapi, tags: ['Responses'] } };
}

/** A client's body validated for its endpoint: the request the pipeline carries, told apart by `endpoint`. */
export function validateRequest<K extends EndpointKind>(
  endpoint: EndpointDescriptor<K>,
  body: unknown,
): ModelRequest<K> {
  return { endpoint: endpoint.kind, body: endpoint.validate(body) };
}

/** Whether the client asked for server-sent events (embeddings and token counts never stream). */
export function asksForStream(request: ModelRequest): boolean {
  return ENDPOINTS[request.endpoint].streams && (request.body as { stream?: unknown }).stream === true;
}
