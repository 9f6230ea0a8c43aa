import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { azureAIAdapter } from '../../../src/providers/azure-ai/index.js';
import { azureOpenAIAdapter } from '../../../src/providers/azure-openai/index.js';
import type { ChatCompletion } from '../../../src/core/openai-types.js';
import { azureErrors } from '../../fakes/azure/errors.js';
import { assembledAzureChatCompletion } from '../../fakes/azure/recorded.js';
import { providerFixturesDir } from '../../fakes/cohere/fixtures.js';
import { expectOpenAPIValid } from '../../helpers/openapi.js';
import { azureRequest } from './helpers.js';
import { parseResponse } from '../operations.js';

const req = (strict: boolean) => azureRequest('azure-openai', { model: 'gpt-4o', messages: [] }, { strict });

describe('Azure chat response', () => {
  it('keeps the content-filter verdicts outside strict mode and removes them in strict mode', () => {
    const body = assembledAzureChatCompletion();
    const loose = parseResponse(azureOpenAIAdapter, req(false), { status: 200, headers: {}, body }) as Record<
      string,
      unknown
    >;
    expectOpenAPIValid('CreateChatCompletionResponse', loose);
    expect(loose.prompt_filter_results).toEqual(body.prompt_filter_results);
    expect((loose as unknown as ChatCompletion).choices[0]).toHaveProperty('content_filter_results');

    const strict = parseResponse(azureOpenAIAdapter, req(true), {
      status: 200,
      headers: {},
      body,
    }) as ChatCompletion;
    expectOpenAPIValid('CreateChatCompletionResponse', strict);
    expect(strict).not.toHaveProperty('prompt_filter_results');
    expect(strict.choices[0]).not.toHaveProperty('content_filter_results');
    expect(strict.choices[0]!.message.content).toBe(
      (body.choices as Array<{ message: { content: string } }>)[0]!.message.content,
    );
    expect(strict.usage).toEqual(body.usage);
    // The upstream body is not changed in place.
    expect(body).toHaveProperty('prompt_filter_results');
  });

  it('turns reasoning_content into content_blocks outside strict mode', () => {
    const body = {
      id: 'x',
      object: 'chat.completion',
      created: 1,
      model: 'DeepSeek-R1',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: '4', reasoning_content: '2 + 2 is 4.', refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
    };
    const aiReq = (strict: boolean) =>
      azureRequest('azure-ai', { model: 'DeepSeek-R1', messages: [] }, { strict });
    const loose = parseResponse(azureAIAdapter, aiReq(false), {
      status: 200,
      headers: {},
      body,
    }) as ChatCompletion;
    expect(loose.choices[0]!.message.content_blocks).toEqual([
      { type: 'thinking', thinking: '2 + 2 is 4.' },
      { type: 'text', text: '4' },
    ]);
    const strict = parseResponse(azureAIAdapter, aiReq(true), {
      status: 200,
      headers: {},
      body,
    }) as ChatCompletion;
    expect(strict.choices[0]!.message).toEqual({ role: 'assistant', content: '4', refusal: null });
  });
});

describe('Azure AI recorded answer of a reasoning model', () => {
  const body = JSON.parse(
    readFileSync(path.join(providerFixturesDir('azure'), 'azure-deepseek-reasoning.1.json'), 'utf8'),
  ) as {
    choices: Array<{ message: { content: string; reasoning_content: string } }>;
    usage: Record<string, number>;
  };
  const aiReq = (strict: boolean) =>
    azureRequest('azure-ai', { model: 'deepseek-v4-pro', messages: [] }, { strict });

  it.each([false, true])(
    'is a valid chat completion (strict %s) with the recorded text and usage',
    (strict) => {
      const out = parseResponse(azureAIAdapter, aiReq(strict), {
        status: 200,
        headers: {},
        body,
      }) as ChatCompletion;
      expectOpenAPIValid('CreateChatCompletionResponse', out);
      const message = out.choices[0]!.message;
      expect(message.content).toBe(body.choices[0]!.message.content);
      expect(message.content_blocks?.[0]).toEqual(
        strict ? undefined : { type: 'thinking', thinking: body.choices[0]!.message.reasoning_content },
      );
      expect(out.usage).toMatchObject({
        prompt_tokens: body.usage.prompt_tokens,
        completion_tokens: body.usage.completion_tokens,
        total_tokens: body.usage.total_tokens,
      });
      if (strict) expect(out.usage).not.toHaveProperty('audio_prompt_tokens');
    },
  );
});

describe('Azure errors', () => {
  const error = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    azureOpenAIAdapter.parseError(req(false), { status, headers, bodyText: JSON.stringify(body) });

  it('normalises the content_filter refusal of a prompt', () => {
    const e = error(400, azureErrors.contentFilter());
    expect(e.status).toBe(400);
    expect(e.type).toBe('invalid_request_error');
    expect(e.code).toBe('content_filter');
    expect(e.param).toBe('prompt');
    expect(e.message).toMatch(/content management policy/);
  });

  it("maps Azure's numeric codes and reads the wait of a 429 from its message", () => {
    const limited = error(429, azureErrors.rateLimited(6));
    expect(limited.code).toBe('rate_limit_exceeded');
    expect(limited.type).toBe('rate_limit_error');
    expect(limited.retryAfterMs).toBe(6000);
    expect(error(429, azureErrors.rateLimited(6), { 'retry-after-ms': '1500' }).retryAfterMs).toBe(1500);
    // Azure's own name for it, which Azure OpenAI and Azure AI Foundry send.
    expect(error(429, azureErrors.rateLimited(6), { 'x-ms-retry-after-ms': '2500' }).retryAfterMs).toBe(2500);
    const auth = error(401, azureErrors.unauthorized());
    expect(auth.code).toBe('invalid_api_key');
    expect(auth.type).toBe('authentication_error');
    expect(error(404, azureErrors.deploymentNotFound()).code).toBe('model_not_found');
  });

  it("names the field of an ErrorResponse's target as param", () => {
    const e = error(400, azureErrors.invalidPayload('training_file'));
    expect([e.status, e.code, e.param]).toEqual([400, 'invalidPayload', 'training_file']);
    expect(e.message).toBe('The training file is not valid JSONL.');
  });

  it('keeps the status of a body that is not JSON', () => {
    const e = azureAIAdapter.parseError(req(false), {
      status: 503,
      headers: {},
      bodyText: 'upstream connect error',
    });
    expect(e.status).toBe(503);
    expect(e.provider).toBe('azure-ai');
    expect(e.message).toBe('upstream connect error');
  });
});
