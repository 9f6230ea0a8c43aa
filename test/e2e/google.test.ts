/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// The google adapter end to end: the openai SDK → the gateway → a fake Gemini API replaying recorded answers.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { readGoogleFixture, readGoogleStream } from '../fakes/google/fixtures.js';
import { fakeEmbedding } from '../fakes/google/gemini-responder.js';
import { startFakeGoogle } from '../fakes/google/server.js';
import { geminiBehindGateway } from '../helpers/gemini-behind-gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { readChatStream } from '../helpers/chat-stream.js';

const gemini = geminiBehindGateway(startFakeGoogle, (fake) => ({
  provider: 'google',
  api_key: fake.apiKey,
  custom_host: fake.url,
}));
const { lastRequest } = gemini;

const weather = {
  type: 'function' as const,
  function: {
    name: 'weather',
    description: 'Current weather',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};

/** What the recorded stream says: the text and the function calls, read straight from its events. */
function recordedStream(name: string): { text: string; calls: Array<{ name: string; args: unknown }> } {
  let text = '';
  const calls: Array<{ name: string; args: unknown }> = [];
  for (const line of readGoogleStream(name)) {
    for (const part of JSON.parse(line).candidates?.[0]?.content?.parts ?? []) {
      if (typeof part.text === 'string' && !part.thought) text += part.text;
      if (part.functionCall?.name)
        calls.push({ name: part.functionCall.name, args: part.functionCall.args ?? {} });
      for (const arg of part.functionCall?.partialArgs ?? []) {
        const key = String(arg.jsonPath).slice(2);
        const call = calls[calls.length - 1] as { args: Record<string, string> };
        call.args[key] = (call.args[key] ?? '') + String(arg.stringValue ?? '');
      }
    }
  }
  return { text, calls };
}

describe('google through the gateway', () => {
  it('answers a plain chat completion with the recorded text and usage', async () => {
    const fixture = readGoogleFixture('google-text.json') as any;
    gemini.fake.enqueue({ fixture: 'google-text.json' });
    const completion = await gemini.client.chat.completions.create({
      model: 'gemini-3-pro-preview',
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'How many r in strawberry?' },
      ],
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(completion.choices[0].message.content).toBe(fixture.candidates[0].content.parts[0].text);
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({
      prompt_tokens: fixture.usageMetadata.promptTokenCount,
      total_tokens: fixture.usageMetadata.totalTokenCount,
      completion_tokens_details: { reasoning_tokens: fixture.usageMetadata.thoughtsTokenCount },
    });
    const sent = lastRequest();
    expect(sent.path).toBe('/v1beta/models/gemini-3-pro-preview:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe(gemini.fake.apiKey);
    expect(sent.body.systemInstruction).toEqual({ parts: [{ text: 'Answer briefly.' }] });
    expect(sent.body.contents).toEqual([{ role: 'user', parts: [{ text: 'How many r in strawberry?' }] }]);
  });

  it('streams the recorded answer, ending with usage', async () => {
    gemini.fake.enqueue({ fixture: 'google-text.chunks.txt' });
    const stream = await gemini.client.chat.completions.create({
      model: 'gemini-3-pro-preview',
      messages: [{ role: 'user', content: 'How many r in strawberry?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { text, usage } = await readChatStream(stream);
    expect(text).toBe(recordedStream('google-text.chunks.txt').text);
    expect(usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 23 + 185, total_tokens: 217 });
    expect(gemini.fake.requests.at(-1)!.query.get('alt')).toBe('sse');
  });

  it('forces a tool call and returns it', async () => {
    gemini.fake.enqueue({ fixture: 'google-tool-call.json' });
    const completion = await gemini.client.chat.completions.create({
      model: 'gemini-3-pro-preview',
      messages: [{ role: 'user', content: 'Weather in San Francisco?' }],
      tools: [weather],
      tool_choice: { type: 'function', function: { name: 'weather' } },
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    const call = completion.choices[0].message.tool_calls?.[0];
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && call.function).toEqual({
      name: 'weather',
      arguments: '{"location":"San Francisco"}',
    });
    expect(lastRequest().body.toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['weather'] },
    });
    expect(lastRequest().body.tools[0].functionDeclarations[0].name).toBe('weather');
  });

  it('fails an answer Gemini ended with MALFORMED_FUNCTION_CALL and nothing in it, as OpenAI fails invalid model output', async () => {
    // The recorded forced tool call, as Gemini answers when the call it wrote does not parse.
    const recorded = readGoogleFixture('google-tool-call.json') as any;
    const malformed = {
      ...recorded,
      candidates: [
        {
          content: { role: 'model', parts: [] },
          finishReason: 'MALFORMED_FUNCTION_CALL',
          finishMessage: 'Malformed function call: print(default_api.weather(location=San Francisco))',
          index: 0,
        },
      ],
    };
    const ask = {
      model: 'gemini-3-pro-preview',
      messages: [{ role: 'user' as const, content: 'Weather in San Francisco?' }],
      tools: [weather],
      tool_choice: 'required' as const,
    };
    gemini.fake.enqueue({ json: malformed });
    const error = await gemini.client.chat.completions.create(ask).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain('MALFORMED_FUNCTION_CALL');

    gemini.fake.enqueue({ events: [malformed] });
    // Nothing went out before the failure: the client gets it as the call's status.
    const streamed = await (async () => {
      const stream = await gemini.client.chat.completions.create({ ...ask, stream: true });
      for await (const chunk of stream) expect(chunk.choices[0]?.finish_reason ?? null).toBeNull();
    })().catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(OpenAI.InternalServerError);
    expect(String((streamed as Error).message)).toContain('MALFORMED_FUNCTION_CALL');
  });

  it('answers a request made with the deprecated functions in their form: function_call, finish_reason function_call', async () => {
    const legacy = {
      model: 'gemini-3-pro-preview',
      messages: [{ role: 'user' as const, content: 'Weather in San Francisco?' }],
      functions: [weather.function],
      function_call: { name: 'weather' },
    };
    gemini.fake.enqueue({ fixture: 'google-tool-call.json' });
    const completion = await gemini.client.chat.completions.create(legacy);
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(completion.choices[0].finish_reason).toBe('function_call');
    expect(completion.choices[0].message.function_call).toEqual({
      name: 'weather',
      arguments: '{"location":"San Francisco"}',
    });
    expect(completion.choices[0].message.tool_calls).toBeUndefined();

    gemini.fake.enqueue({ fixture: 'google-tool-call.chunks.txt' });
    const stream = await gemini.client.chat.completions.create({ ...legacy, stream: true });
    const call = { name: '', arguments: '' };
    let finish: string | null = null;
    for await (const chunk of stream) {
      expectOpenAPIValid('CreateChatCompletionStreamResponse', chunk);
      const delta = chunk.choices[0]?.delta;
      expect(delta?.tool_calls).toBeUndefined();
      call.name += delta?.function_call?.name ?? '';
      call.arguments += delta?.function_call?.arguments ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(call).toEqual(
      recordedStream('google-tool-call.chunks.txt').calls.map((c) => ({
        name: c.name,
        arguments: JSON.stringify(c.args),
      }))[0],
    );
    expect(finish).toBe('function_call');
  });

  it('rebuilds streamed arguments named __proto__ as the keys they are, without touching the prototype of objects', async () => {
    // The recorded partialArgs stream, its argument renamed as a prompt may make the model name it.
    const events = readGoogleStream('google-stream-tool-call-arguments.chunks.txt').map((line) =>
      JSON.parse(line.replaceAll('"$.location"', '"$.__proto__.polluted"')),
    );
    gemini.fake.enqueue({ events });
    try {
      const stream = await gemini.client.chat.completions.create({
        model: 'gemini-3.1-pro-preview',
        messages: [{ role: 'user', content: 'Weather in Boston and San Francisco?' }],
        tools: [weather],
        stream: true,
      });
      const args: string[] = [];
      for await (const chunk of stream) {
        for (const call of chunk.choices[0]?.delta?.tool_calls ?? []) {
          args[call.index] = (args[call.index] ?? '') + (call.function?.arguments ?? '');
        }
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(args).toEqual([
        '{"__proto__":{"polluted":"Boston"}}',
        '{"__proto__":{"polluted":"San Francisco"}}',
      ]);
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
  });

  it('streams parallel tool calls, each with its own id and arguments', async () => {
    gemini.fake.enqueue({ fixture: 'google-stream-no-args-tool-call.chunks.txt' });
    const stream = await gemini.client.chat.completions.create({
      model: 'gemini-3-flash-preview',
      messages: [{ role: 'user', content: 'Read the theme, then screens A, B and C.' }],
      tools: [
        {
          type: 'function',
          function: { name: 'read_theme', parameters: { type: 'object', properties: {} } },
        },
        {
          type: 'function',
          function: {
            name: 'read_screen',
            parameters: { type: 'object', properties: { id: { type: 'string' } } },
          },
        },
      ],
      stream: true,
    });
    const { toolCalls: calls, finish } = await readChatStream(stream);
    expect(finish).toBe('tool_calls');
    expect(calls.map((c) => ({ name: c.name, args: JSON.parse(c.arguments) as unknown }))).toEqual(
      recordedStream('google-stream-no-args-tool-call.chunks.txt').calls,
    );
    expect(new Set(calls.map((c) => c.id)).size).toBe(4);
  });

  it('answers with JSON following a schema', async () => {
    const answer = { name: 'Ada', age: 36 };
    gemini.fake.enqueue({
      json: {
        candidates: [
          {
            content: { role: 'model', parts: [{ text: JSON.stringify(answer) }] },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 9, totalTokenCount: 21 },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'json-1',
      },
    });
    const completion = await gemini.client.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Who wrote the first program?' }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'person',
          strict: true,
          schema: {
            type: 'object',
            properties: { name: { type: 'string' }, age: { type: 'integer' } },
            required: ['name', 'age'],
            additionalProperties: false,
          },
        },
      },
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(JSON.parse(completion.choices[0].message.content ?? '')).toEqual(answer);
    expect(lastRequest().body.generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseSchema: {
        type: 'OBJECT',
        properties: { name: { type: 'STRING' }, age: { type: 'INTEGER' } },
        required: ['name', 'age'],
      },
    });
  });

  it('types an enum of numbers or booleans by its values, not as a string', async () => {
    await gemini.answeredWithText({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Rate it.' }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'rating',
          schema: {
            type: 'object',
            properties: {
              stars: { enum: [1, 2, 3] },
              score: { enum: [0.5, 1] },
              ok: { enum: [true, false] },
            },
            required: ['stars', 'score', 'ok'],
          },
        },
      },
    });
    expect(lastRequest().body.generationConfig.responseSchema.properties).toEqual({
      stars: { type: 'INTEGER' },
      score: { type: 'NUMBER' },
      ok: { type: 'BOOLEAN' },
    });
  });

  it('sends schemas Google takes: no empty properties on an object, no properties on a string', async () => {
    // An action with no arguments, and a tool schema that wrongly gives a string properties (as MCP servers do).
    const completion = await gemini.answeredWithText({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Next step?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'page',
            parameters: {
              type: 'object',
              properties: {
                data: { type: 'string', properties: { id: { type: 'string' } }, required: ['id'] },
                go_back: { type: 'object', properties: {} },
              },
            },
          },
        },
      ],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'step',
          schema: {
            type: 'object',
            properties: { go_back: { type: 'object', properties: {}, additionalProperties: false } },
          },
        },
      },
    });
    expect(completion.choices[0].finish_reason).toBe('stop');
    const sent = lastRequest().body;
    expect(sent.tools[0].functionDeclarations[0].parameters.properties).toEqual({
      data: { type: 'STRING' },
      go_back: { type: 'OBJECT' },
    });
    expect(sent.generationConfig.responseSchema.properties).toEqual({ go_back: { type: 'OBJECT' } });
  });

  it('leaves out text parts with no text, which Google refuses and OpenAI takes', async () => {
    const completion = await gemini.answeredWithText({
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'system', content: '' },
        { role: 'user', content: 'Hello.' },
        { role: 'user', content: '' },
        {
          role: 'user',
          content: [
            { type: 'text', text: '' },
            { type: 'text', text: 'How many r in strawberry?' },
          ],
        },
      ],
    });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(lastRequest().body.systemInstruction).toBeUndefined();
    expect(lastRequest().body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hello.' }, { text: 'How many r in strawberry?' }] },
    ]);
  });

  it('gives an array whose items are not described items Google takes', async () => {
    const completion = await gemini.answeredWithText({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Tag it.' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'tag',
            parameters: {
              type: 'object',
              properties: {
                tags: { type: 'array' },
                ids: { type: 'array', items: {} },
                scores: { type: 'array', items: { type: 'number' } },
              },
            },
          },
        },
      ],
    });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(lastRequest().body.tools[0].functionDeclarations[0].parameters.properties).toEqual({
      tags: { type: 'ARRAY', items: { type: 'STRING' } },
      ids: { type: 'ARRAY', items: { type: 'STRING' } },
      scores: { type: 'ARRAY', items: { type: 'NUMBER' } },
    });
  });

  it('sends an image inline', async () => {
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const completion = await gemini.askedAboutImage(`data:image/png;base64,${png}`);
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(lastRequest().body.contents[0].parts).toEqual([
      { text: 'What is this?' },
      { inlineData: { mimeType: 'image/png', data: png } },
    ]);
  });

  it('sends an image given as data:image/jpg as image/jpeg, the type Google knows', async () => {
    const jpeg =
      '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgICAgMCAgIDAwMDBAYEBAQEBAgGBgUGCQgKCgkICQkKDA8MCgsOCwkJDRENDg8QEBEQCgwSExIQEw8QEBD/yQALCAABAAEBAREA/8wABgAQEAX/2gAIAQEAAD8A0s8g/9k=';
    const completion = await gemini.askedAboutImage(`data:image/jpg;base64,${jpeg}`);
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(lastRequest().body.contents[0].parts[1]).toEqual({
      inlineData: { mimeType: 'image/jpeg', data: jpeg },
    });
  });

  it('embeds texts through batchEmbedContents', async () => {
    const response = await gemini.client.embeddings.create({
      model: 'gemini-embedding-001',
      input: ['hello', 'world'],
      dimensions: 4,
      encoding_format: 'float',
    });
    expectOpenAPIValid('CreateEmbeddingResponse', response);
    expect(response.data.map((d) => d.embedding)).toEqual([
      fakeEmbedding('hello', 4),
      fakeEmbedding('world', 4),
    ]);
    expect(lastRequest().path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
  });

  it('embeds more texts than one batch takes (100) in several batches, merged in input order', async () => {
    const input = Array.from({ length: 230 }, (_, i) => `text ${i}`);
    const before = gemini.fake.requests.length;
    const response = await gemini.client.embeddings.create({
      model: 'gemini-embedding-001',
      input,
      dimensions: 4,
      encoding_format: 'float',
    });
    expectOpenAPIValid('CreateEmbeddingResponse', response);
    expect(response.data.map((d) => d.index)).toEqual(input.map((_, i) => i));
    expect(response.data.map((d) => d.embedding)).toEqual(input.map((text) => fakeEmbedding(text, 4)));
    const batches = gemini.fake.requests
      .slice(before)
      .map((r) => (r.body as { requests: unknown[] }).requests.length);
    expect(batches.sort((a, b) => b - a)).toEqual([100, 100, 30]);
  });

  it('decodes base64 embeddings produced by the gateway', async () => {
    // The SDK asks for base64 by default and decodes it to floats.
    const response = await gemini.client.embeddings.create({
      model: 'gemini-embedding-001',
      input: 'hello',
      dimensions: 4,
    });
    const expected = Array.from(new Float32Array(fakeEmbedding('hello', 4)));
    expect(response.data[0].embedding).toEqual(expected);
  });

  it("passes on Google's refusal of a wrong key with its status and message", async () => {
    const error = await gemini.refusal(
      gatewayOpenAI(gemini.gateway, {
        provider: 'google',
        api_key: 'wrong-key',
        custom_host: gemini.fake.url,
      }),
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain('API key not valid');
  });

  it('passes on a 429 with its rate-limit type', async () => {
    gemini.fake.enqueue({ status: 429, body: readGoogleFixture('google-429-retry-info.json') });
    const error = await gemini.refusal();
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
  });
});
