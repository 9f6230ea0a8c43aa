import { describe, expect, it } from 'vitest';
import { anthropicAdapter } from '../../../src/providers/anthropic/index.js';
import type { ChatCompletion } from '../../../src/core/openai-types.js';
import type { StreamOutput } from '../../../src/providers/types.js';
import { expectOpenAPIValid } from '../../helpers/openapi.js';
import { readJsonFixture } from './fixtures.js';
import { chatRequest } from './helpers.js';
import { createStreamTranslator, parseResponse } from '../operations.js';

function parse(fixture: string, body: Record<string, unknown> = {}, strictCompat = false): ChatCompletion {
  const req = chatRequest(body, { strictCompat });
  const out = parseResponse(anthropicAdapter, req, {
    status: 200,
    headers: {},
    body: readJsonFixture(fixture),
  });
  expectOpenAPIValid('CreateChatCompletionResponse', out);
  return out as ChatCompletion;
}

describe('anthropic response translation', () => {
  it('translates a text answer with id, model and usage', () => {
    const out = parse('anthropic-text.json');
    expect(out.id).toBe('msg_01VdEjxAP5ahtHKrrRdNBteQ');
    expect(out.model).toBe('claude-sonnet-4-5-20250929');
    expect(out.choices[0].message.content).toMatch(/^Hello! I'm doing well/);
    expect(out.choices[0].finish_reason).toBe('stop');
    expect(out.usage).toEqual({
      prompt_tokens: 12,
      completion_tokens: 29,
      total_tokens: 41,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });

  it('counts cache reads and writes into prompt_tokens', () => {
    const body = { ...readJsonFixture('anthropic-text.json') };
    body.usage = {
      input_tokens: 10,
      cache_read_input_tokens: 1000,
      cache_creation_input_tokens: 200,
      output_tokens: 5,
    };
    const out = parseResponse(anthropicAdapter, chatRequest({}), {
      status: 200,
      headers: {},
      body,
    }) as ChatCompletion;
    expect(out.usage).toEqual({
      prompt_tokens: 1210,
      completion_tokens: 5,
      total_tokens: 1215,
      prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 200 },
    });
  });

  it('reports the thinking tokens Anthropic names (output_tokens_details) as reasoning tokens', () => {
    const out = parse('anthropic-claude-opus-5-reasoning-high.1.json');
    expect(out.usage).toMatchObject({
      completion_tokens: 1699,
      completion_tokens_details: { reasoning_tokens: 139 },
    });
    // An answer that names none reports none.
    expect(parse('anthropic-text.json').usage).not.toHaveProperty('completion_tokens_details');
  });

  it("reports the server tools' uses Anthropic bills apart (web searches, web fetches)", () => {
    const out = parseResponse(anthropicAdapter, chatRequest({}), {
      status: 200,
      headers: {},
      body: readJsonFixture('anthropic-web-search-tool.1.json'),
    }) as ChatCompletion;
    expect(out.usage).toMatchObject({ server_tool_use: { web_search_requests: 2 } });
    const plain = parse('anthropic-text.json');
    expect(plain.usage).not.toHaveProperty('server_tool_use');
  });

  it('translates tool calls', () => {
    const out = parse('anthropic-tool-no-args.json');
    const message = out.choices[0].message;
    expect(out.choices[0].finish_reason).toBe('tool_calls');
    expect(message.tool_calls).toEqual([
      {
        id: expect.stringMatching(/^toolu_/),
        type: 'function',
        function: { name: 'updateIssueList', arguments: '{}' },
      },
    ]);
  });

  it('returns the forced json tool input as content for response_format json_object', () => {
    const out = parse('anthropic-json-tool.1.json', { response_format: { type: 'json_object' } });
    const message = out.choices[0].message;
    expect(message.tool_calls).toBeUndefined();
    expect(out.choices[0].finish_reason).toBe('stop');
    expect(JSON.parse(message.content ?? '')).toEqual(
      (readJsonFixture('anthropic-json-tool.1.json').content as Array<{ input: unknown }>)[0].input,
    );
  });

  it('returns output_config JSON text as content', () => {
    const out = parse('anthropic-json-output-format.1.json', {
      response_format: { type: 'json_schema', json_schema: { name: 'recipe', schema: { type: 'object' } } },
    });
    expect(JSON.parse(out.choices[0].message.content ?? '').recipe.name).toBe('Classic Lasagna');
  });

  it('puts thinking in content_blocks unless strict', () => {
    const loose = parse('anthropic-clear-thinking.1.json');
    expect(loose.choices[0].message.content).toBe('925 ÷ 5 = 185');
    expect(loose.choices[0].message.content_blocks).toEqual([
      { type: 'thinking', thinking: '925 divided by 5 = 185', signature: expect.stringMatching(/^Er4B/) },
      { type: 'text', text: '925 ÷ 5 = 185' },
    ]);
    const strict = parse('anthropic-clear-thinking.1.json', {}, true);
    expect(strict.choices[0].message.content_blocks).toBeUndefined();
  });

  it('maps a refusal to content_filter with the explanation', () => {
    const out = parse('anthropic-refusal.json');
    expect(out.choices[0].finish_reason).toBe('content_filter');
    expect(out.choices[0].message.content).toBeNull();
    expect(out.choices[0].message.refusal).toMatch(/Usage Policy/);
  });
});

describe('anthropic errors', () => {
  it('keeps the status, normalises the body and reads retry-after', () => {
    const error = anthropicAdapter.parseError(chatRequest({}), {
      status: 429,
      headers: { 'retry-after': '7', 'request-id': 'req_1' },
      bodyText: JSON.stringify({
        type: 'error',
        error: {
          type: 'rate_limit_error',
          message: 'Number of request tokens has exceeded your per-minute rate limit',
        },
      }),
    });
    expect(error.status).toBe(429);
    expect(error.type).toBe('rate_limit_error');
    expect(error.code).toBe('rate_limit_error');
    expect(error.message).toMatch(/per-minute rate limit/);
    expect(error.retryAfterMs).toBe(7000);
  });

  it('keeps 529 overloaded and survives a non-JSON body', () => {
    const overloaded = anthropicAdapter.parseError(chatRequest({}), {
      status: 529,
      headers: {},
      bodyText: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    });
    expect(overloaded.status).toBe(529);
    expect(overloaded.code).toBe('overloaded_error');
    const html = anthropicAdapter.parseError(chatRequest({}), {
      status: 502,
      headers: {},
      bodyText: '<html>bad gateway</html>',
    });
    expect(html.status).toBe(502);
    expect(html.message).toContain('bad gateway');
  });

  it.each([
    ['overloaded_error', 529],
    ['rate_limit_error', 429],
    ['api_error', 500],
  ])('turns an error event of type %s inside a 200 stream into a %i', (type, status) => {
    const translator = createStreamTranslator(anthropicAdapter, chatRequest({ stream: true }));
    const start = JSON.stringify({
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'm',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    });
    translator.push({ kind: 'sse', event: 'message_start', data: start });
    const out: StreamOutput[] = translator.push({
      kind: 'sse',
      event: 'error',
      data: JSON.stringify({ type: 'error', error: { type, message: 'Overloaded' } }),
    });
    expect(out).toHaveLength(1);
    expect(out[0].type).toBe('error');
    if (out[0].type === 'error') {
      expect(out[0].error.status).toBe(status);
      expect(out[0].error.code).toBe(type);
    }
    expect(translator.finished()).toBe(false);
  });

  it('reports a malformed event instead of failing', () => {
    const translator = createStreamTranslator(anthropicAdapter, chatRequest({ stream: true }));
    expect(translator.push({ kind: 'sse', event: undefined, data: '{oops' })[0].type).toBe('malformed');
  });
});
