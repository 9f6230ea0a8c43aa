/** The prompt ingress's operations, for the OpenAPI document (server/openapi.ts). */
import type { Operation } from '../../core/operation.js';
import { PromptCompletionRequestSchema } from '../../core/schemas/index.js';

/** The non-streamed answer of a prompt completion. */
export const PromptCompletionEnvelopeSchema = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['success'] },
    headers: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description:
        "The answer's response headers: the gateway's (x-gateway-prompt-id, x-gateway-prompt-version, " +
        'x-gateway-provider, x-gateway-trace-id …) and those of the provider it forwards.',
    },
    body: {
      type: 'object',
      description:
        'The chat completion (a chat prompt) or the text completion (a completion prompt), as ' +
        '/v1/chat/completions or /v1/completions would answer it.',
    },
  },
  required: ['status', 'headers', 'body'],
};

/** The answer of a render: the request, with what it came from, and again as `data` beside
 * `success: true`, where Portkey's SDKs read it (`render(…).data`). */
export const PromptRenderSchema = {
  type: 'object',
  properties: {
    object: { type: 'string', enum: ['prompt.render'] },
    prompt_id: { type: 'string' },
    slug: { type: 'string' },
    version: { type: 'integer' },
    endpoint: { type: 'string', enum: ['/v1/chat/completions', '/v1/completions'] },
    body: {
      type: 'object',
      description:
        'The request the prompt makes: the rendered messages (a chat prompt) or prompt (a completion ' +
        "prompt), the version's parameters and the call's overrides over them.",
    },
    success: { type: 'boolean', enum: [true] },
    data: { type: 'object', description: 'The same request as `body`.' },
  },
  required: ['object', 'prompt_id', 'slug', 'version', 'endpoint', 'body', 'success', 'data'],
};

export const PROMPT_OPERATIONS: Operation[] = [
  {
    method: 'post',
    path: '/prompts/{promptId}/completions',
    summary:
      'Run a stored prompt (`{promptId}`: id or slug, the published version; `…@latest`; `…@<n>`): the ' +
      'envelope {status, headers, body}, or server-sent events with stream: true',
    tags: ['Prompts'],
    requestBody: PromptCompletionRequestSchema,
    response: { $ref: '#/components/schemas/PromptCompletionEnvelope' },
  },
  {
    method: 'post',
    path: '/prompts/{promptId}/chat/completions',
    summary: 'Run a stored chat prompt, answered as /v1/chat/completions answers (for OpenAI clients)',
    tags: ['Prompts'],
    requestBody: PromptCompletionRequestSchema,
  },
  {
    method: 'post',
    path: '/prompts/{promptId}/render',
    summary: 'The request a stored prompt makes with these variables, without calling a model',
    tags: ['Prompts'],
    requestBody: PromptCompletionRequestSchema,
    response: PromptRenderSchema,
  },
];
