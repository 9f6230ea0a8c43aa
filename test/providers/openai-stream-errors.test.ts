// Errors OpenAI-wire providers report inside a 200 answer, in the shapes OpenRouter documents
// (openrouter.ai/docs/api-reference/errors): before any token, `{"error":{"code":<HTTP status>,"message"}}`;
// once tokens have gone out, a chunk with a top-level `error` and its choice ended by finish_reason "error".
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/core/errors.js';
import { findAdapter } from '../../src/providers/registry.js';
import type { AdapterRequest, ProviderAdapter, StreamOutput } from '../../src/providers/types.js';
import { createStreamTranslator, parseResponse } from './operations.js';

const openrouter = findAdapter('openrouter') as ProviderAdapter;

function request(stream: boolean): AdapterRequest {
  return {
    endpoint: 'chat',
    body: { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream },
    stream,
    target: { provider: 'openrouter', api_key: 'k' },
    forwardHeaders: {},
    clientHeaders: {},
    strictCompat: true,
  };
}

const chunk = (extra: Record<string, unknown>) =>
  JSON.stringify({
    id: 'gen-1',
    object: 'chat.completion.chunk',
    created: 1770000000,
    model: 'openai/gpt-4o',
    provider: 'OpenAI',
    ...extra,
  });

function translate(payloads: string[]) {
  const translator = createStreamTranslator(openrouter, request(true));
  const outputs: StreamOutput[] = payloads.flatMap((data) =>
    translator.push({ kind: 'sse', event: undefined, data }),
  );
  return { outputs, finished: translator.finished() };
}

describe('OpenRouter errors inside a 200 stream', () => {
  it('an error after tokens, on a chunk whose choice ends with finish_reason error, fails the stream', () => {
    const { outputs, finished } = translate([
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] }),
      chunk({
        error: { code: 'server_error', message: 'Provider disconnected unexpectedly' },
        choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }],
      }),
    ]);
    expect(outputs.map((output) => output.type)).toEqual(['chunk', 'error']);
    const error = (outputs[1] as { error: ProviderError }).error;
    expect(error.message).toBe('Provider disconnected unexpectedly');
    expect(error.status).toBe(502);
    expect(finished).toBe(false);
  });

  it.each([429, 400, 503])('an error whose code is the HTTP status %i keeps it', (status) => {
    const { outputs } = translate([JSON.stringify({ error: { code: status, message: 'no' } })]);
    expect(outputs).toHaveLength(1);
    expect((outputs[0] as { error: ProviderError }).error.status).toBe(status);
  });
});

describe('OpenRouter errors in a 200 JSON answer', () => {
  it('keeps the HTTP status its code gives', () => {
    const answer = () =>
      parseResponse(openrouter, request(false), {
        status: 200,
        headers: {},
        body: { error: { code: 429, message: 'Rate limit exceeded: limit_rpm/openai/gpt-4o' } },
      });
    expect(answer).toThrow(ProviderError);
    try {
      answer();
    } catch (error) {
      expect((error as ProviderError).status).toBe(429);
      expect((error as ProviderError).message).toContain('Rate limit exceeded');
    }
  });
});
