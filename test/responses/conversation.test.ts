/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// Conversations through previous_response_id: the history is rebuilt from the store for whichever provider
// answers the next turn — across a fallback from Anthropic to Gemini between turns, with a tool call, its
// output and Claude's signed thinking kept — and a follow-up sent the instant a response completes finds
// it, on SQLite and on PostgreSQL.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAnthropicJsonFixture } from '../fakes/anthropic/fixtures.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { readGoogleFixture } from '../fakes/google/fixtures.js';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

const ANTHROPIC_KEY = 'sk-ant-conversation';

let anthropic: FakeAnthropic;
let google: FakeGoogle;

beforeAll(async () => {
  [anthropic, google] = await Promise.all([startFakeAnthropic({ apiKey: ANTHROPIC_KEY }), startFakeGoogle()]);
});

afterAll(async () => {
  await Promise.all([anthropic?.close(), google?.close()]);
});

const anthropicTarget = () => ({ provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: anthropic.url });
const googleTarget = () => ({ provider: 'google', api_key: google.apiKey, custom_host: google.url });

const lastAnthropicBody = () => anthropic.requests.at(-1)!.body as any;

const updateIssueList = {
  type: 'function' as const,
  name: 'updateIssueList',
  description: 'Updates the current issue list',
  parameters: { type: 'object', properties: {} },
  strict: false,
};

describe('a three-turn conversation with a tool call, falling back between providers', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startGateway();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('keeps the whole history: the fallback provider and the next turn see every item', async () => {
    const client = gatewayOpenAI(gateway, {
      strategy: { mode: 'fallback', on_status_codes: [529] },
      targets: [anthropicTarget(), googleTarget()],
    });
    const toolAnswer = readAnthropicJsonFixture('anthropic-tool-no-args.json') as any;
    const [toolText, toolUse] = toolAnswer.content;

    // Turn 1: Claude calls the tool.
    anthropic.enqueue({ kind: 'json', fixture: 'anthropic-tool-no-args.json' });
    const first = await client.responses.create({
      model: 'claude-sonnet-4-5',
      instructions: 'You manage issues.',
      input: 'Please update the issue list',
      tools: [updateIssueList],
    });
    expectOpenAPIValid('Response', first);
    const call = first.output.find((item) => item.type === 'function_call') as any;
    expect(call).toMatchObject({ call_id: toolUse.id, name: 'updateIssueList', arguments: '{}' });
    expect(first.output_text).toBe(toolText.text);

    // Turn 2: the tool's output; Anthropic is overloaded, Gemini answers with the whole history.
    anthropic.enqueue({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' });
    google.enqueue({ fixture: 'google-text.json' });
    const second = await client.responses.create({
      model: 'claude-sonnet-4-5',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"updated":3}' }],
      tools: [updateIssueList],
    });
    expectOpenAPIValid('Response', second);
    const geminiText = (readGoogleFixture('google-text.json') as any).candidates[0].content.parts[0].text;
    expect(second.output_text).toBe(geminiText);
    expect(second.previous_response_id).toBe(first.id);
    const geminiSaw = google.requests.at(-1)!.body as any;
    // Instructions are not carried over from a previous response.
    expect(geminiSaw.systemInstruction).toBeUndefined();
    expect(geminiSaw.contents).toEqual([
      { role: 'user', parts: [{ text: 'Please update the issue list' }] },
      {
        role: 'model',
        parts: [{ text: toolText.text }, { functionCall: { name: 'updateIssueList', args: {} } }],
      },
      {
        role: 'user',
        parts: [{ functionResponse: { name: 'updateIssueList', response: expect.anything() } }],
      },
    ]);

    // Turn 3: back on Claude, which gets its own tool call, the output and Gemini's answer; it thinks.
    anthropic.enqueue({ kind: 'json', fixture: 'anthropic-clear-thinking.1.json' });
    const third = await client.responses.create({
      model: 'claude-sonnet-4-5',
      previous_response_id: second.id,
      input: 'What is 925 / 5?',
      tools: [updateIssueList],
    });
    expectOpenAPIValid('Response', third);
    expect(lastAnthropicBody().messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Please update the issue list' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: toolText.text },
          { type: 'tool_use', id: toolUse.id, name: 'updateIssueList', input: {} },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '{"updated":3}' }],
      },
      { role: 'assistant', content: [{ type: 'text', text: geminiText }] },
      { role: 'user', content: [{ type: 'text', text: 'What is 925 / 5?' }] },
    ]);
    const thinking = (readAnthropicJsonFixture('anthropic-clear-thinking.1.json') as any).content[0];
    expect(third.output[0]).toMatchObject({
      type: 'reasoning',
      content: [{ type: 'reasoning_text', text: thinking.thinking }],
      encrypted_content: thinking.signature,
    });

    // A fourth turn sends Claude its thinking back, signature and all.
    anthropic.enqueue({ kind: 'json', fixture: 'anthropic-text.json' });
    await client.responses.create({
      model: 'claude-sonnet-4-5',
      previous_response_id: third.id,
      input: 'Thanks',
    });
    expect(lastAnthropicBody().messages.at(-2)).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: thinking.thinking, signature: thinking.signature },
        { type: 'text', text: '925 ÷ 5 = 185' },
      ],
    });
  });
});

function instantFollowUp(start: () => Promise<TestGateway>) {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await start();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('a follow-up sent the instant a streamed response completes finds it', async () => {
    const client = gatewayOpenAI(gateway, anthropicTarget());
    const stream = await client.responses.create({
      model: 'claude-sonnet-4-5',
      input: 'Hello',
      stream: true,
    });
    let followUp: Promise<OpenAI.Responses.Response> | undefined;
    let text = '';
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') {
        // Before the rest of the body is read: the completed event is the first the client knows of it.
        followUp = client.responses.create({
          model: 'claude-sonnet-4-5',
          previous_response_id: event.response.id,
          input: 'And you?',
        });
      }
    }
    const answer = await followUp!;
    expect(answer.status).toBe('completed');
    expect(lastAnthropicBody().messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
      { role: 'assistant', content: [{ type: 'text', text }] },
      { role: 'user', content: [{ type: 'text', text: 'And you?' }] },
    ]);
  });

  it('a follow-up sent the instant a JSON response arrives finds it', async () => {
    const client = gatewayOpenAI(gateway, anthropicTarget());
    for (let turn = 0, previous: string | undefined; turn < 5; turn++) {
      const response = await client.responses.create({
        model: 'claude-sonnet-4-5',
        input: `turn ${turn}`,
        previous_response_id: previous,
      });
      expect(lastAnthropicBody().messages).toHaveLength(2 * turn + 1);
      previous = response.id;
    }
  });
}

describe('instant follow-ups on SQLite', () => {
  instantFollowUp(() => startGateway());
});

describeWithPostgres('instant follow-ups on PostgreSQL', () => {
  const schema = freshSchemaName('responses');
  afterAll(async () => {
    await dropSchema(schema);
  });
  instantFollowUp(() => startGateway({ postgres: { url: postgresUrl(), schema } }));
});
