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
  validateChatCompletionRequest,
  validateCompletionRequest,
  validateEmbeddingRequest,
} from '../core/schemas/index.js';
import type { EndpointKind } from '../providers/types.js';

export interface EndpointDescriptor {
  kind: EndpointKind;
  /** Under /v1. */
  path: string;
  /** Validates a body (throws invalid_body naming the field) and returns it typed. */
  validate(body: unknown): Record<string, unknown>;
  /** Whether `stream: true` asks for server-sent events. */
  streams: boolean;
  openapi: Operation;
}

function descriptor(
  kind: EndpointKind,
  path: string,
  validate: (body: unknown) => unknown,
  schema: unknown,
  summary: string,
  streams: boolean,
): EndpointDescriptor {
  return {
    kind,
    path,
    validate: validate as (body: unknown) => Record<string, unknown>,
    streams,
    openapi: { method: 'post', path, summary, tags: ['Models'], requestBody: schema },
  };
}

export const ENDPOINTS: Readonly<Record<EndpointKind, EndpointDescriptor>> = {
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
};
