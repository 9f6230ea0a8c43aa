import { describe, expect, it } from 'vitest';
import { findAdapter } from '../../src/providers/registry.js';
import type { AdapterRequest, ProviderAdapter } from '../../src/providers/types.js';
import { buildRequest } from './operations.js';

async function sent(provider: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const req = {
    endpoint: 'chat',
    body: { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...body },
    stream: false,
    target: { provider, api_key: 'k', custom_host: 'http://127.0.0.1:9' },
    forwardHeaders: {},
    clientHeaders: {},
    strictCompat: false,
  } as AdapterRequest<'chat'>;
  const upstream = await buildRequest(findAdapter(provider) as ProviderAdapter, req);
  return JSON.parse(String(upstream.body)) as Record<string, unknown>;
}

describe('the answer limit on OpenAI-wire providers', () => {
  it.each(['openai', 'groq', 'x-ai', 'cerebras'])(
    '%s gets max_completion_tokens as it is',
    async (provider) => {
      const body = await sent(provider, { max_completion_tokens: 200 });
      expect(body.max_completion_tokens).toBe(200);
      expect(body.max_tokens).toBeUndefined();
    },
  );

  it.each(['mistral-ai', 'deepseek', 'together-ai', 'openai-compatible'])(
    '%s, which knows only max_tokens, gets the limit under that name',
    async (provider) => {
      const body = await sent(provider, { max_completion_tokens: 200, max_tokens: 50 });
      expect(body.max_tokens).toBe(200);
      expect(body.max_completion_tokens).toBeUndefined();
      expect((await sent(provider, { max_tokens: 50 })).max_tokens).toBe(50);
    },
  );
});

describe('Mistral, which refuses fields it does not know (422 extra_forbidden)', () => {
  it('gets a stream without stream_options, which the gateway adds to every stream', async () => {
    const body = await sent('mistral-ai', { stream: true, stream_options: { include_usage: true } });
    expect(body.stream).toBe(true);
    expect(body).not.toHaveProperty('stream_options');
  });

  it('others keep stream_options', async () => {
    const body = await sent('groq', { stream: true, stream_options: { include_usage: true } });
    expect(body.stream_options).toEqual({ include_usage: true });
  });
});
