/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// An error about one input item names it as OpenAI does, by its path in the client's request
// (`input[2].content[0].image_url`), in `param` and in the message — whether the body's schema refused it,
// the translation for a chat provider, the adapter of that provider, or a native provider. The index is the
// item's in the client's own `input`, not in the conversation the gateway rebuilt from previous_response_id;
// an item of that stored conversation is named by previous_response_id. The openai SDK against the gateway
// and the fakes.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

const ANTHROPIC_KEY = 'sk-ant-paths';

let gateway: TestGateway;
let anthropic: FakeAnthropic;
let openai: FakeUpstream;
let compatible: FakeUpstream;
let google: FakeGoogle;

beforeAll(async () => {
  [gateway, anthropic, openai, compatible, google] = await Promise.all([
    startGateway(),
    startFakeAnthropic({ apiKey: ANTHROPIC_KEY }),
    startFakeOpenAI({ name: 'oai' }),
    startFakeOpenAI({ name: 'compat' }),
    startFakeGoogle(),
  ]);
});

afterAll(async () => {
  await Promise.all([
    gateway?.close(),
    anthropic?.close(),
    openai?.close(),
    compatible?.close(),
    google?.close(),
  ]);
});

beforeEach(() => openai.reset());

const anthropicTarget = () => ({ provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: anthropic.url });
const openaiTarget = () => ({ provider: 'openai', api_key: 'sk-oai', custom_host: openai.url });
const groqTarget = () => ({ provider: 'groq', api_key: 'gsk', custom_host: compatible.url });

async function refusal(client: OpenAI, body: Record<string, unknown>): Promise<any> {
  const error = await client.responses.create(body as any).catch((err: unknown) => err);
  expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  return error;
}

const byFileId = { type: 'input_image' as const, file_id: 'file_abc', detail: 'auto' as const };
const words = (text: string) => ({ role: 'user' as const, content: text });

describe('an error about an input item names its path', () => {
  it('when the schema refuses it', async () => {
    const error = await refusal(gatewayOpenAI(gateway, anthropicTarget()), {
      model: 'claude-sonnet-4-5',
      input: [words('a'), words('b'), { role: 'user', content: [{ type: 'input_image', image_url: '' }] }],
    });
    expect(error.param).toBe('input[2].content[0].image_url');
    expect(error.message).toContain('input[2].content[0].image_url');
  });

  it('when the translation for a chat provider refuses it', async () => {
    const client = gatewayOpenAI(gateway, anthropicTarget());
    const image = await refusal(client, {
      model: 'claude-sonnet-4-5',
      input: [words('a'), { role: 'user', content: [{ type: 'input_text', text: 'see' }, byFileId] }],
    });
    expect(image.param).toBe('input[1].content[1].image_url');
    expect(image.message).toContain('input[1].content[1].image_url');
    const output = await refusal(client, {
      model: 'claude-sonnet-4-5',
      input: [
        words('shoot'),
        { type: 'function_call', call_id: 'c', name: 'shot', arguments: '{}' },
        {
          type: 'function_call_output',
          call_id: 'c',
          output: [
            { type: 'input_text', text: 'here' },
            { type: 'input_image', image_url: 'data:image/png;base64,AA==' },
          ],
        },
      ],
    });
    expect(output.param).toBe('input[2].output[1]');
    expect(output.message).toContain('input[2].output[1]');
    expect(output.message).toContain('input_image');
  });

  it("when a chat provider's adapter refuses it, through the message it became", async () => {
    const error = await refusal(gatewayOpenAI(gateway, groqTarget()), {
      model: 'llama-3.3-70b-versatile',
      instructions: 'Be brief.',
      input: [
        words('first'),
        { role: 'assistant', content: 'ok' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is in this file?' },
            { type: 'input_file', file_url: 'https://example.com/a.pdf' },
          ],
        },
      ],
    });
    expect(error.param).toBe('input[2].content[1].file_url');
    expect(error.message).toContain('input[2].content[1].file_url');
  });

  it('names the call_id of a function_call_output whose call is not in the conversation', async () => {
    const error = await refusal(
      gatewayOpenAI(gateway, { provider: 'google', api_key: google.apiKey, custom_host: google.url }),
      {
        model: 'gemini-2.5-flash',
        instructions: 'Be brief.',
        input: [
          words('weather?'),
          { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
          { type: 'function_call_output', call_id: 'c2', output: 'rainy' },
        ],
      },
    );
    expect(error.param).toBe('input[3].call_id');
    expect(error.message).toContain('input[3].call_id');
  });

  it("counts from the client's own input, after the conversation of previous_response_id", async () => {
    const client = gatewayOpenAI(gateway, anthropicTarget());
    const first = await client.responses.create({
      model: 'claude-sonnet-4-5',
      input: [words('one'), words('two')],
    });
    const error = await refusal(client, {
      model: 'claude-sonnet-4-5',
      previous_response_id: first.id,
      input: [words('three'), { role: 'user', content: [byFileId] }],
    });
    expect(error.param).toBe('input[1].content[0].image_url');
    expect(error.message).toContain('input[1].content[0].image_url');
  });

  it('names previous_response_id for an item of the stored conversation', async () => {
    // OpenAI took an image by file id natively; Claude, on the next turn, cannot.
    const first = await gatewayOpenAI(gateway, openaiTarget()).responses.create({
      model: 'gpt-4o',
      input: [words('look'), { role: 'user', content: [byFileId] }],
    });
    const error = await refusal(gatewayOpenAI(gateway, anthropicTarget()), {
      model: 'claude-sonnet-4-5',
      previous_response_id: first.id,
      input: 'And now?',
    });
    expect(error.param).toBe('previous_response_id');
    expect(error.message).toContain('previous_response_id');
    expect(error.message).toContain('content[0].image_url of item 1 of the conversation');
    expect(error.message).not.toContain('input[1]');
  });

  it('in the error of a background response that failed on it', async () => {
    const client = gatewayOpenAI(gateway, anthropicTarget());
    const first = await client.responses.create({ model: 'claude-sonnet-4-5', input: 'one' });
    const created = await client.responses.create({
      model: 'claude-sonnet-4-5',
      previous_response_id: first.id,
      input: [words('two'), { role: 'user', content: [byFileId] }],
      background: true,
    });
    let response: any = created;
    for (const deadline = Date.now() + 10_000; ['queued', 'in_progress'].includes(response.status);) {
      if (Date.now() > deadline) throw new Error(`response still ${response.status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      response = await client.responses.retrieve(created.id);
    }
    expect(response.status).toBe('failed');
    expect(response.error.message).toContain('input[1].content[0].image_url');
  });

  it("when a native provider refuses it, counted from the client's input", async () => {
    const client = gatewayOpenAI(gateway, openaiTarget());
    const first = await client.responses.create({ model: 'gpt-4o', input: 'Hello' });
    // The conversation the provider gets: 'Hello', the answer, then the client's two items.
    openai.enqueue({
      status: 400,
      body: {
        error: {
          message: "Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.",
          type: 'invalid_request_error',
          param: 'input[3].content[0]',
          code: 'invalid_value',
        },
      },
    });
    const error = await refusal(client, {
      model: 'gpt-4o',
      previous_response_id: first.id,
      input: [words('a'), { role: 'assistant', content: [{ type: 'input_text', text: 'b' }] }],
    });
    expect((openai.requests.at(-1)!.body as any).input).toHaveLength(4);
    expect(error.param).toBe('input[1].content[0]');
    expect(error.code).toBe('invalid_value');
  });
});
