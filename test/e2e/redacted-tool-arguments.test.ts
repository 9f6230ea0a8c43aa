/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
/**
 * A redacting output check (`default.pii` with `redact: true`) covers the arguments of the tool calls an
 * answer makes, streamed or not: on /v1/chat/completions (argument deltas of 8 characters, so the address
 * is split across several) and on /v1/responses, translated (groq) and native (OpenAI). The `openai` SDK
 * reads every stream whole and assembles the arguments, which must still be the JSON the model wrote,
 * with the value replaced.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  [gateway, fake] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'tools' })]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), fake?.close()]);
});

const EMAIL = 'jane.doe@example.com';
const PROMPT = `write to ${EMAIL} today`;
// The fake calls the tool with the last user message as its argument.
const REDACTED = { input: 'write to [EMAIL_1] today' };

const redactOut = {
  output_guardrails: [{ id: 'pii-out', 'default.pii': { categories: ['email'], redact: true } }],
};

function sdk(target: Record<string, unknown>): OpenAI {
  return gatewayOpenAI(gateway, { ...target, ...redactOut });
}

const openaiTarget = () => ({ provider: 'openai', api_key: 'sk-oai', custom_host: fake.url });
// groq has no Responses API: /v1/responses is translated to chat for it.
const groqTarget = () => ({ provider: 'groq', api_key: 'gsk-test', custom_host: fake.url });

const chatTools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'send_mail',
      parameters: { type: 'object', properties: { input: { type: 'string' } } },
    },
  },
];
const responseTools: OpenAI.Responses.Tool[] = [
  {
    type: 'function',
    name: 'send_mail',
    parameters: { type: 'object', properties: { input: { type: 'string' } } },
    strict: false,
  },
];

describe('redacting output checks on tool-call arguments', () => {
  it('chat stream: the assembled arguments are valid JSON with the value redacted', async () => {
    const stream = await sdk(openaiTarget()).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: PROMPT }],
      tools: chatTools,
      tool_choice: 'required',
      stream: true,
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(JSON.stringify(chunks)).not.toContain('jane.doe');
    const args = chunks
      .flatMap((c) => c.choices[0]?.delta?.tool_calls ?? [])
      .map((call) => call.function?.arguments ?? '')
      .join('');
    expect(JSON.parse(args)).toEqual(REDACTED);
    expect(chunks.at(-1)?.choices[0]?.finish_reason ?? chunks.at(-2)?.choices[0]?.finish_reason).toBe(
      'tool_calls',
    );
  });

  it('chat answer: the arguments are redacted', async () => {
    const answer = await sdk(openaiTarget()).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: PROMPT }],
      tools: chatTools,
      tool_choice: 'required',
    });
    const call = answer.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(JSON.parse(call.function.arguments)).toEqual(REDACTED);
  });

  it.each([
    ['translated', groqTarget],
    ['native', openaiTarget],
  ])('responses stream, %s: deltas, done events and the stored response are redacted', async (_, target) => {
    const client = sdk(target());
    const stream = await client.responses.create({
      model: 'gpt-4o-mini',
      input: PROMPT,
      tools: responseTools,
      tool_choice: 'required',
      stream: true,
    });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    for (const event of events) expectOpenAPIValid('ResponseStreamEvent', event);
    expect(JSON.stringify(events)).not.toContain('jane.doe');
    const deltas = events
      .filter((e) => e.type === 'response.function_call_arguments.delta')
      .map((e) => e.delta)
      .join('');
    expect(JSON.parse(deltas)).toEqual(REDACTED);
    const done = events.find((e) => e.type === 'response.function_call_arguments.done');
    expect(JSON.parse(done.arguments)).toEqual(REDACTED);
    const final = events.at(-1);
    expect(final.type).toBe('response.completed');
    const call = final.response.output.find((item: any) => item.type === 'function_call');
    expect(JSON.parse(call.arguments)).toEqual(REDACTED);

    const stored = await client.responses.retrieve(final.response.id);
    expect(JSON.stringify(stored)).not.toContain('jane.doe');
  });
});
