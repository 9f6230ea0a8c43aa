import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk } from '../../src/core/openai-types.js';
import type { ChatCompletionRequest } from '../../src/core/schemas/index.js';
import {
  acceptsAssistantPrefill,
  buildContinuation,
  CONTINUE_INSTRUCTION,
  type Continuation,
} from '../../src/gateway/routing/continuation.js';

const identity = { id: 'chatcmpl-first', created: 1700000000, object: 'chat.completion.chunk' };
const body: ChatCompletionRequest = {
  model: 'm',
  messages: [{ role: 'user', content: 'tell me' }],
  stream: true,
};

function messagesOf(continuation: Continuation | undefined) {
  return continuation?.endpoint === 'chat' ? continuation.body.messages : undefined;
}

function chunk(delta: Record<string, unknown>, finish: string | null = null, index = 0): ChatCompletionChunk {
  return {
    id: 'chatcmpl-second',
    object: 'chat.completion.chunk',
    created: 1800000000,
    model: 'fallback-model',
    choices: [{ index, delta, finish_reason: finish, logprobs: null }],
  } as ChatCompletionChunk;
}

describe('continuation of a broken stream', () => {
  it('asks an OpenAI-wire target to continue after the partial assistant message', () => {
    const c = buildContinuation(
      { endpoint: 'chat', body },
      { text: 'Once upon', identity, provider: 'openai', model: 'm' },
    );
    expect(messagesOf(c)).toEqual([
      { role: 'user', content: 'tell me' },
      { role: 'assistant', content: 'Once upon' },
      { role: 'user', content: CONTINUE_INSTRUCTION },
    ]);
  });

  it('prefills an Anthropic-style target, without trailing whitespace, and drops the doubled space', () => {
    const c = buildContinuation(
      { endpoint: 'chat', body },
      { text: 'Once upon ', identity, provider: 'anthropic', model: 'claude' },
    );
    expect(messagesOf(c)).toEqual([
      { role: 'user', content: 'tell me' },
      { role: 'assistant', content: 'Once upon' },
    ]);
    const first = c?.rewrite(chunk({ content: ' a time' }));
    expect(first?.choices[0].delta.content).toBe('a time');
    const second = c?.rewrite(chunk({ content: ' there' }));
    expect(second?.choices[0].delta.content).toBe(' there');
  });

  it('asks an Anthropic-style target with extended thinking on to continue instead of prefilling', () => {
    const thinking = { ...body, thinking: { type: 'enabled', budget_tokens: 1024 } } as ChatCompletionRequest;
    const c = buildContinuation(
      { endpoint: 'chat', body: thinking },
      { text: 'Once upon ', identity, provider: 'anthropic', model: 'claude' },
    );
    expect(messagesOf(c)).toEqual([
      { role: 'user', content: 'tell me' },
      { role: 'assistant', content: 'Once upon ' },
      { role: 'user', content: CONTINUE_INSTRUCTION },
    ]);
  });

  it('knows which targets take a prefill', () => {
    expect(acceptsAssistantPrefill('anthropic', 'claude-3-5-haiku')).toBe(true);
    expect(acceptsAssistantPrefill('bedrock', 'anthropic.claude-3-haiku')).toBe(true);
    expect(acceptsAssistantPrefill('bedrock', 'amazon.titan-text')).toBe(false);
    expect(acceptsAssistantPrefill('vertex-ai', 'claude-sonnet-4')).toBe(true);
    expect(acceptsAssistantPrefill('vertex-ai', 'gemini-2.0-flash')).toBe(false);
    expect(acceptsAssistantPrefill('openai', 'gpt-4o')).toBe(false);
  });

  it('rewrites chunks to the first stream: id, created, index 0; drops the second role delta; keeps the model', () => {
    const c = buildContinuation(
      { endpoint: 'chat', body },
      { text: 'x', identity, provider: 'openai', model: 'm' },
    );
    expect(c?.rewrite(chunk({ role: 'assistant', content: '' }))).toBeUndefined();
    const out = c?.rewrite(chunk({ content: 'y' }));
    expect(out).toMatchObject({ id: 'chatcmpl-first', created: 1700000000, model: 'fallback-model' });
    expect(out?.choices[0]).toMatchObject({ index: 0, delta: { content: 'y' } });
    expect(c?.rewrite(chunk({}, 'stop'))?.choices[0].finish_reason).toBe('stop');
    const usage = { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 };
    expect(c?.rewrite({ ...chunk({}), choices: [], usage })?.usage).toEqual(usage);
  });

  it('restarts from scratch when only the role chunk went out', () => {
    const c = buildContinuation(
      { endpoint: 'chat', body },
      { text: '', identity, provider: 'openai', model: 'm' },
    );
    expect(c?.body).toBe(body);
  });

  it('continues a text completion by appending the partial text to the prompt', () => {
    const c = buildContinuation(
      { endpoint: 'completions', body: { model: 'i', prompt: 'Say:', echo: true, stream: true } },
      { text: ' hello', identity, provider: 'openai', model: 'i' },
    );
    expect(c?.body).toEqual({ model: 'i', prompt: 'Say: hello', stream: true });
    expect(
      buildContinuation(
        { endpoint: 'completions', body: { model: 'i', prompt: [[1, 2]] } },
        { text: 'a', identity, provider: 'openai', model: 'i' },
      ),
    ).toBeUndefined();
  });
});
