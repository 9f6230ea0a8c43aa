import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOpenAPIValid, openAPIDocumentPath, validateAgainstOpenAPI } from '../helpers/openapi.js';

const fixtures = path.join(path.dirname(openAPIDocumentPath()), 'provider-fixtures', 'openai');
const readJson = (rel: string): unknown => JSON.parse(readFileSync(path.join(fixtures, rel), 'utf8'));
const readLines = (rel: string): unknown[] =>
  readFileSync(path.join(fixtures, rel), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));

describe('OpenAPI helper on recorded OpenAI responses', () => {
  it('accepts a real chat completion, every real stream chunk, completion, embedding and error', () => {
    expectOpenAPIValid('CreateChatCompletionResponse', readJson('chat/openai-text.json'));
    for (const chunk of readLines('chat/openai-text.chunks.txt')) {
      expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
    }
    expectOpenAPIValid('CreateCompletionResponse', readJson('completion/openai-completion-text.json'));
    expectOpenAPIValid('CreateEmbeddingResponse', readJson('embedding/openai-embedding.json'));
    expectOpenAPIValid('ErrorResponse', readJson('responses/openai-error.1.json'));
    expectOpenAPIValid('ListModelsResponse', {
      object: 'list',
      data: [{ id: 'gpt-4o', object: 'model', created: 1715367049, owned_by: 'system' }],
    });
  });
});

describe('OpenAPI helper rejects wrong bodies', () => {
  const good = readJson('chat/openai-text.json') as Record<string, unknown>;

  it('reports a missing required field and a wrong type, with paths', () => {
    const { created: _created, ...noCreated } = good;
    const result = validateAgainstOpenAPI('CreateChatCompletionResponse', { ...noCreated, id: 42 });
    expect(result.valid).toBe(false);
    expect(result.errors).toContain("must have required property 'created'");
    expect(result.errors).toMatch(/\/id: must be string/);
  });

  it('enforces enums (object, finish_reason) and nested $refs (message role)', () => {
    const bad = structuredClone(good) as {
      object: string;
      choices: { finish_reason: string; message: { role: string } }[];
    };
    bad.object = 'chat.completion.chunk';
    bad.choices[0].finish_reason = 'done';
    bad.choices[0].message.role = 'robot';
    const result = validateAgainstOpenAPI('CreateChatCompletionResponse', bad);
    expect(result.valid).toBe(false);
    expect(result.errors).toContain('/object');
    expect(result.errors).toContain('/choices/0/finish_reason');
    expect(result.errors).toContain('/choices/0/message/role');
  });

  it('honours `nullable` from OpenAPI 3.0 style schemas (stream chunk logprobs)', () => {
    const chunk = readLines('chat/openai-text.chunks.txt')[1] as { choices: { logprobs: unknown }[] };
    expect(validateAgainstOpenAPI('CreateChatCompletionStreamResponse', chunk).valid).toBe(true);
    chunk.choices[0].logprobs = 'not-an-object';
    expect(validateAgainstOpenAPI('CreateChatCompletionStreamResponse', chunk).valid).toBe(false);
  });

  it('rejects an error body without its required fields', () => {
    const result = validateAgainstOpenAPI('ErrorResponse', { error: { message: 'x' } });
    expect(result.valid).toBe(false);
    expect(result.errors).toContain("must have required property 'type'");
  });

  it('expectOpenAPIValid throws a readable message; unknown schema names throw', () => {
    expect(() => expectOpenAPIValid('CreateEmbeddingResponse', { object: 'list', data: [] })).toThrow(
      /CreateEmbeddingResponse[\s\S]*must have required property 'model'/,
    );
    expect(() => validateAgainstOpenAPI('NoSuchSchema', {})).toThrow(
      /no component schema named NoSuchSchema/,
    );
  });
});
