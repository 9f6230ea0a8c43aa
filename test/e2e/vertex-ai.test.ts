/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// The vertex-ai adapter end to end: the openai SDK → the gateway → a fake Vertex AI that issues access tokens
// for a test service account (JWT-bearer grant) and replays recorded Gemini and Anthropic answers.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { readGoogleFixture, readGoogleStream } from '../fakes/google/fixtures.js';
import { startFakeVertex } from '../fakes/vertex-ai/server.js';
import { geminiBehindGateway } from '../helpers/gemini-behind-gateway.js';
import { expectOpenAPIValid, openAPIDocumentPath } from '../helpers/openapi.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { vertexTarget } from '../helpers/provider-targets.js';
import { readChatStream } from '../helpers/chat-stream.js';

function anthropicSample(name: string): string {
  return readFileSync(
    path.join(path.dirname(openAPIDocumentPath()), 'provider-fixtures', 'anthropic', name),
    'utf8',
  );
}

const gemini = geminiBehindGateway(startFakeVertex, vertexTarget);
const { lastRequest } = gemini;

const geminiPath = (model: string, action: string) =>
  `/v1/projects/test-project/locations/europe-west4/publishers/google/models/${model}:${action}`;

describe('vertex-ai through the gateway', () => {
  it('answers a plain chat completion with a token from the service account', async () => {
    const fixture = readGoogleFixture('google-text.json') as any;
    const completion = await gemini.answeredWithText({
      model: 'gemini-3-pro-preview',
      messages: [{ role: 'user', content: 'How many r in strawberry?' }],
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(completion.choices[0].message.content).toBe(fixture.candidates[0].content.parts[0].text);
    expect(completion.usage?.total_tokens).toBe(fixture.usageMetadata.totalTokenCount);
    const sent = lastRequest();
    expect(sent.path).toBe(geminiPath('gemini-3-pro-preview', 'generateContent'));
    expect(gemini.fake.issuedTokens.map((t) => `Bearer ${t}`)).toContain(sent.headers.authorization);
  });

  it('reuses the cached token across calls', async () => {
    const before = gemini.fake.tokenRequests;
    gemini.fake.enqueue({ fixture: 'google-text.json' }, { fixture: 'google-text.json' });
    for (let i = 0; i < 2; i++) {
      await gemini.client.chat.completions.create({
        model: 'gemini-2.5-flash',
        messages: [{ role: 'user', content: 'hi' }],
      });
    }
    expect(gemini.fake.tokenRequests).toBe(before);
  });

  it('streams the recorded answer, ending with usage', async () => {
    gemini.fake.enqueue({ fixture: 'google-reasoning.chunks.txt' });
    const stream = await gemini.client.chat.completions.create({
      model: 'gemini-3-pro-preview',
      messages: [{ role: 'user', content: 'How many r in strawberry?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { text, usage } = await readChatStream(stream);
    const recorded = readGoogleStream('google-reasoning.chunks.txt').map((l) => JSON.parse(l));
    expect(text).toBe(
      recorded.map((e: any) => e.candidates[0].content.parts.map((p: any) => p.text ?? '').join('')).join(''),
    );
    expect(usage?.total_tokens).toBe(recorded.at(-1).usageMetadata.totalTokenCount);
    expect(lastRequest().path).toBe(geminiPath('gemini-3-pro-preview', 'streamGenerateContent'));
  });

  it('forces a tool call', async () => {
    gemini.fake.enqueue({ fixture: 'google-tool-call-gemini3.json' });
    const completion = await gemini.client.chat.completions.create({
      model: 'gemini-3-pro-preview',
      messages: [{ role: 'user', content: 'Weather in San Francisco?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'weather',
            parameters: { type: 'object', properties: { location: { type: 'string' } } },
          },
        },
      ],
      tool_choice: 'required',
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    const call = completion.choices[0].message.tool_calls?.[0];
    expect(call?.type === 'function' && call.function).toEqual({
      name: 'weather',
      arguments: '{"location":"San Francisco"}',
    });
    expect(lastRequest().body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
  });

  it('streams parallel tool calls whose arguments Vertex streams as partialArgs', async () => {
    gemini.fake.enqueue({ fixture: 'google-stream-tool-call-arguments.chunks.txt' });
    const stream = await gemini.client.chat.completions.create({
      model: 'gemini-3.1-pro-preview',
      messages: [{ role: 'user', content: 'Weather in Boston and San Francisco?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'getWeather',
            parameters: { type: 'object', properties: { location: { type: 'string' } } },
          },
        },
      ],
      stream: true,
    });
    const { toolCalls: calls } = await readChatStream(stream);
    // The recorded stream names getWeather twice, with location Boston then San Francisco.
    const recorded = readGoogleStream('google-stream-tool-call-arguments.chunks.txt')
      .flatMap((l) => JSON.parse(l).candidates[0].content.parts)
      .flatMap((p: any) => p.functionCall?.partialArgs ?? [])
      .map((a: any) => a.stringValue)
      .filter((v: string) => v);
    expect(calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual(
      recorded.map((location: string) => ['getWeather', { location }]),
    );
    expect(new Set(calls.map((c) => c.id)).size).toBe(calls.length);
  });

  it('answers with JSON following a schema', async () => {
    gemini.fake.enqueue({
      json: {
        candidates: [
          { content: { role: 'model', parts: [{ text: '{"city":"Oslo"}' }] }, finishReason: 'STOP' },
        ],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
        modelVersion: 'gemini-2.5-flash',
        createTime: '2025-01-01T00:00:00.000Z',
        responseId: 'v-json',
      },
    });
    const completion = await gemini.client.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Capital of Norway as JSON' }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'c',
          schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(JSON.parse(completion.choices[0].message.content ?? '')).toEqual({ city: 'Oslo' });
    expect(completion.created).toBe(Date.parse('2025-01-01T00:00:00.000Z') / 1000);
    expect(lastRequest().body.generationConfig.responseSchema).toEqual({
      type: 'OBJECT',
      properties: { city: { type: 'STRING' } },
      required: ['city'],
    });
  });

  it('sends a gs:// image as fileData', async () => {
    await gemini.askedAboutImage('gs://bucket/photo.png');
    expect(lastRequest().body.contents[0].parts[1]).toEqual({
      fileData: { mimeType: 'image/png', fileUri: 'gs://bucket/photo.png' },
    });
  });

  it('embeds through predict', async () => {
    const recorded = readGoogleFixture('google-vertex-embedding.json', 'google-vertex') as any;
    const response = await gemini.client.embeddings.create({
      model: 'text-embedding-005',
      input: ['first text', 'second text'],
      encoding_format: 'float',
    });
    expectOpenAPIValid('CreateEmbeddingResponse', response);
    expect(response.data.map((d) => d.embedding)).toEqual(
      recorded.predictions.map((p: any) => p.embeddings.values),
    );
    expect(response.usage.prompt_tokens).toBe(11);
    expect(lastRequest().path).toMatch(/publishers\/google\/models\/text-embedding-005:predict$/);
  });

  it('embeds several inputs with a one-input model: one call each, answers in input order', async () => {
    // Longest first: the fake answers a text after its length in ms, so the first input comes back last.
    const input = Array.from({ length: 20 }, (_, i) => `${'word '.repeat(20 - i)}end`.trim());
    const before = gemini.fake.requests.length;
    const response = await gemini.client.embeddings.create({ model: 'gemini-embedding-001', input });
    expectOpenAPIValid('CreateEmbeddingResponse', JSON.parse(JSON.stringify(response)));
    expect(response.data.map((d) => d.index)).toEqual(input.map((_, i) => i));
    // The openai SDK asks for base64 and decodes it: each vector is that of its own text.
    expect(response.data.map((d) => d.embedding[0])).toEqual(input.map((text) => text.length));
    const words = input.reduce((sum, text) => sum + text.split(' ').length, 0);
    expect(response.usage).toEqual({ prompt_tokens: words, total_tokens: words });
    expect(response.model).toBe('gemini-embedding-001');
    const calls = gemini.fake.requests.slice(before);
    expect(calls).toHaveLength(20);
    expect(calls.map((c) => (c.body as any).instances.length)).toEqual(calls.map(() => 1));
    expect(gemini.fake.predictPeak).toBeGreaterThan(1);
    expect(gemini.fake.predictPeak).toBeLessThanOrEqual(8);
  });

  it("answers Vertex's refusal of one of the inputs when their calls are fanned out", async () => {
    const error = await gemini.client.embeddings
      .create({ model: 'gemini-embedding-001', input: ['first', 'over quota', 'third'] })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain('Quota exceeded');
  });

  it('embeds with gemini-embedding-2 through embedContent, one input a call, answers in input order', async () => {
    const before = gemini.fake.requests.length;
    const input = ['one', 'two words', 'and three words'];
    const response = await gemini.client.embeddings.create({
      model: 'gemini-embedding-2',
      input,
      encoding_format: 'float',
    });
    expectOpenAPIValid('CreateEmbeddingResponse', JSON.parse(JSON.stringify(response)));
    expect(response.data.map((d) => d.embedding[0])).toEqual(input.map((text) => text.length));
    expect(response.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
    const calls = gemini.fake.requests.slice(before);
    expect(calls.map((c) => c.path)).toEqual(
      calls.map(() => expect.stringMatching(/gemini-embedding-2:embedContent$/)),
    );
    expect(calls).toHaveLength(3);
  });

  it('embeds more inputs than a predict call takes in calls of 250', async () => {
    const before = gemini.fake.requests.length;
    const input = Array.from({ length: 251 }, (_, i) => `text ${i}`);
    const response = await gemini.client.embeddings.create({
      model: 'text-embedding-005',
      input,
      encoding_format: 'float',
    });
    expect(response.data.map((d) => d.index)).toEqual(input.map((_, i) => i));
    const sizes = gemini.fake.requests.slice(before).map((c) => (c.body as any).instances.length as number);
    expect(sizes.sort((a, b) => b - a)).toEqual([250, 1]);
    expect(response.usage.prompt_tokens).toBe(125 * 11 + 5);
  });

  it('embeds inputs whose tokens together pass what a predict call takes in calls under that bound', async () => {
    const before = gemini.fake.requests.length;
    // 250 texts of 100 words: 25,000 tokens, over Vertex's 20,000 a call though within its 250 texts
    const input = Array.from({ length: 250 }, (_, i) => `${'word '.repeat(99)}w${i}`);
    const response = await gemini.client.embeddings.create({
      model: 'text-embedding-005',
      input,
      encoding_format: 'float',
    });
    expect(response.data.map((d) => d.index)).toEqual(input.map((_, i) => i));
    const calls = gemini.fake.requests
      .slice(before)
      .map((c) => (c.body as any).instances as Array<{ content: string }>);
    expect(calls.length).toBeGreaterThan(1);
    expect(
      calls
        .flat()
        .map((instance) => instance.content)
        .sort(),
    ).toEqual([...input].sort());
  });

  it('answers a Claude model through rawPredict', async () => {
    gemini.fake.enqueue({ anthropicFixture: 'anthropic-text' });
    const completion = await gemini.client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'Hello' }],
      max_tokens: 200,
    });
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    const recorded = JSON.parse(anthropicSample('anthropic-text.json')) as {
      content: Array<{ type: string; text?: string }>;
    };
    expect(completion.choices[0].message.content).toBe(
      recorded.content
        .filter((b) => b.type === 'text')
        .map((b) => b.text)
        .join(''),
    );
    const sent = lastRequest();
    expect(sent.path).toBe(
      '/v1/projects/test-project/locations/europe-west4/publishers/anthropic/models/claude-sonnet-4-5:rawPredict',
    );
    expect(sent.body.anthropic_version).toBe('vertex-2023-10-16');
  });

  it('streams a Claude model through streamRawPredict', async () => {
    gemini.fake.enqueue({ anthropicFixture: 'anthropic-text' });
    const stream = await gemini.client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
    });
    const { text } = await readChatStream(stream);
    const expected = anthropicSample('anthropic-text.chunks.txt')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l))
      .filter((e: any) => e.type === 'content_block_delta' && e.delta.type === 'text_delta')
      .map((e: any) => e.delta.text)
      .join('');
    expect(text).toBe(expected);
    expect(lastRequest().path).toMatch(/:streamRawPredict$/);
  });

  it('fans n out into one call per choice for a Claude model', async () => {
    const before = gemini.fake.requests.length;
    gemini.fake.enqueue({ anthropicFixture: 'anthropic-text' }, { anthropicFixture: 'anthropic-text' });
    const completion = await gemini.client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'Hello' }],
      n: 2,
    });
    expect(completion.choices.map((choice) => choice.index)).toEqual([0, 1]);
    const calls = gemini.fake.requests.slice(before).filter((r) => r.path.endsWith(':rawPredict'));
    expect(calls).toHaveLength(2);
    expect(calls.every((call) => (call.body as { n?: number }).n === undefined)).toBe(true);
  });

  it('refuses a config without cloudb_project_id with a 400 naming it', async () => {
    const error = await gemini.refusal(
      gatewayOpenAI(gemini.gateway, vertexTarget(gemini.fake, { cloudb_project_id: undefined })),
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(JSON.stringify((error as InstanceType<typeof OpenAI.APIError>).error)).toContain(
      'cloudb_project_id',
    );
  });

  it('reports a refused token exchange as a 401', async () => {
    const other = await startFakeVertex();
    try {
      other.refuseTokens(true);
      const error = await gemini.refusal(
        gatewayOpenAI(gemini.gateway, {
          ...vertexTarget(gemini.fake),
          cloudb_service_account_json: other.serviceAccount,
          custom_host: other.url,
        }),
      );
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    } finally {
      await other.close();
    }
  });
});
