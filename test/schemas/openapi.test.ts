/**
 * The same schemas feed the OpenAPI document, so they must be plain JSON Schema that strict
 * tools accept, and must judge the examples as the gateway's validators do.
 */
import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { GatewayConfigSchema } from '../../src/gateway/config/index.js';
import {
  ChatCompletionRequestSchema,
  CompletionRequestSchema,
  EmbeddingRequestSchema,
} from '../../src/core/schemas/index.js';
import {
  goodCompletionBodies,
  goodEmbeddingBodies,
  minimalChatBodies,
  richChatBody,
  richConfig,
} from './good-bodies.js';
import { chatBodyCases, embeddingBodyCases } from './cases.js';

const strict = new Ajv({ strict: true, allowUnionTypes: true });

describe('schemas as JSON Schema', () => {
  it.each([
    ChatCompletionRequestSchema,
    CompletionRequestSchema,
    EmbeddingRequestSchema,
    GatewayConfigSchema,
  ])('$$id compiles under strict ajv', (schema) => {
    expect(() => strict.compile(JSON.parse(JSON.stringify(schema)) as object)).not.toThrow();
  });

  it('accepts the valid examples and rejects the shape errors, as the validators do', () => {
    const ajv = new Ajv({ strict: true });
    const chat = ajv.compile(JSON.parse(JSON.stringify(ChatCompletionRequestSchema)) as object);
    for (const body of [richChatBody, ...minimalChatBodies]) expect(chat(body)).toBe(true);
    // Cross-field rules (top_logprobs needs logprobs, …) are not JSON Schema, nor are metadata's limits,
    // checked after the schema (core/metadata-limits.ts); skip those cases.
    const crossField = new Set([
      'top_logprobs',
      'stream_options',
      'messages[1].content',
      'metadata',
      `metadata.${'k'.repeat(65)}`,
      'metadata.k',
    ]);
    for (const c of chatBodyCases.filter((c) => !crossField.has(c.param ?? '')))
      expect(chat(c.body), c.name).toBe(false);
    const completions = ajv.compile(JSON.parse(JSON.stringify(CompletionRequestSchema)) as object);
    for (const body of goodCompletionBodies) expect(completions(body)).toBe(true);
    const embeddings = ajv.compile(JSON.parse(JSON.stringify(EmbeddingRequestSchema)) as object);
    for (const body of goodEmbeddingBodies) expect(embeddings(body)).toBe(true);
    for (const c of embeddingBodyCases) expect(embeddings(c.body), c.name).toBe(false);
    const config = ajv.compile(JSON.parse(JSON.stringify(GatewayConfigSchema)) as object);
    expect(config(richConfig)).toBe(true);
  });
});
