/**
 * What a hook list is shown: the text checks read is drawn from the body when first read, once, and a
 * mutator's rewrite is shown with its own text.
 */
import { describe, expect, it } from 'vitest';
import { shownAnswer, shownRequest, withBody, type HookInput } from '../../src/gateway/hooks/hook-input.js';

type Json = Record<string, unknown>;

/** A chat request whose last message's content is read through a getter that counts its reads. */
function countingRequest(content: string): { body: Json; reads: () => number } {
  let reads = 0;
  const message = {
    role: 'user',
    get content() {
      reads += 1;
      return content;
    },
  };
  return { body: { messages: [{ role: 'system', content: 'be brief' }, message] }, reads: () => reads };
}

describe('shown bodies', () => {
  it('draws the request text on first read only, and keeps it', () => {
    const { body, reads } = countingRequest('hello there');
    const request = shownRequest('chatComplete', body);
    expect(reads()).toBe(0);
    expect(request.text).toBe('hello there');
    expect(request.text).toBe('hello there');
    expect(reads()).toBe(1);
    expect(request.json).toBe(body);
  });

  it('draws the answer text as docs/guardrails.md says: the first choice, or the completion text', () => {
    const chat = { choices: [{ message: { content: 'first' } }, { message: { content: 'second' } }] };
    expect(shownAnswer('chatComplete', chat, 200).text).toBe('first');
    expect(shownAnswer('complete', { choices: [{ text: 'done' }] }, 246)).toMatchObject({
      text: 'done',
      statusCode: 246,
    });
  });

  it('shows a rewrite with its own text, on the side the hooks run', () => {
    const before: HookInput = {
      event: 'beforeRequestHook',
      requestType: 'chatComplete',
      callType: 'chatComplete',
      request: shownRequest('chatComplete', { messages: [{ role: 'user', content: 'my pw' }] }),
      provider: 'openai',
      model: 'gpt-4o-mini',
      metadata: {},
      headers: {},
    };
    expect(withBody(before, { messages: [{ role: 'user', content: 'my [X]' }] }).request.text).toBe('my [X]');

    const after: HookInput = {
      ...before,
      event: 'afterRequestHook',
      response: shownAnswer('chatComplete', { choices: [{ message: { content: 'raw' } }] }, 200),
    };
    const rewritten = withBody(after, { choices: [{ message: { content: 'clean' } }] });
    expect(rewritten.response).toMatchObject({ text: 'clean', statusCode: 200 });
    expect(rewritten.request.text).toBe('my pw');
  });
});
