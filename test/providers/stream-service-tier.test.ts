import { describe, expect, it } from 'vitest';
import { findAdapter } from '../../src/providers/registry.js';
import type { AdapterRequest, ProviderAdapter } from '../../src/providers/types.js';
import { MessagesEventRelay } from '../../src/providers/anthropic/index.js';
import { ResponsesEventRelay } from '../../src/providers/openai/openai-responses-operation.js';
import { createStreamTranslator } from './operations.js';

function request(provider: string): AdapterRequest {
  return {
    endpoint: 'chat',
    body: {
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      service_tier: 'priority',
    },
    stream: true,
    target: { provider, api_key: 'k' },
    forwardHeaders: {},
    clientHeaders: {},
    strictCompat: true,
  };
}

const chunk = (extra: Record<string, unknown>) =>
  JSON.stringify({
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4o',
    choices: [],
    ...extra,
  });

describe('an OpenAI stream', () => {
  it('tells the service tier its chunks name, for the cost', () => {
    for (const provider of ['openai', 'azure-openai']) {
      const translator = createStreamTranslator(findAdapter(provider) as ProviderAdapter, request(provider));
      expect(translator.serviceTier?.()).toBeUndefined();
      translator.push({ kind: 'sse', event: undefined, data: chunk({ service_tier: 'default' }) });
      expect({ provider, tier: translator.serviceTier?.() }).toEqual({ provider, tier: 'default' });
    }
  });
});

describe('a Responses stream', () => {
  it('tells the service tier its response events name, for the cost', () => {
    const relay = new ResponsesEventRelay('openai');
    const event = (type: string, tier: string) =>
      JSON.stringify({ type, response: { id: 'resp_1', status: 'in_progress', service_tier: tier } });
    relay.push({ kind: 'sse', event: 'response.created', data: event('response.created', 'auto') });
    expect(relay.serviceTier()).toBe('auto');
    relay.push({ kind: 'sse', event: 'response.completed', data: event('response.completed', 'default') });
    expect(relay.serviceTier()).toBe('default');
  });
});

describe('a Messages stream relayed', () => {
  it("tells the service tier its message_start's usage names, for the cost", () => {
    const relay = new MessagesEventRelay('anthropic');
    const start = {
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-x',
        content: [],
        usage: { input_tokens: 1, output_tokens: 1, service_tier: 'priority' },
      },
    };
    relay.push({ kind: 'sse', event: 'message_start', data: JSON.stringify(start) });
    relay.push({
      kind: 'sse',
      event: 'message_delta',
      data: JSON.stringify({ type: 'message_delta', delta: {}, usage: { output_tokens: 5 } }),
    });
    expect(relay.serviceTier()).toBe('priority');
  });
});
