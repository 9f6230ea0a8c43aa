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
  },
];
