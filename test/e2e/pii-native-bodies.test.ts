/**
 * `default.pii` reads every text of a body relayed natively, not only its turns: a Messages request's
 * `system` and `tool_result` contents, a Responses request's `instructions`, and a Message's `tool_use`
 * input (an object, where chat has JSON text), in a JSON answer and in a held stream.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { eventsOf, postRawSse } from '../messages/anthropic-shapes.js';

const API_KEY = 'sk-ant-pii';
const EMAIL = 'jane.doe@example.com';
let gateway: TestGateway;
let anthropic: FakeAnthropic;
let openai: FakeUpstream;

beforeAll(async () => {
  [gateway, anthropic, openai] = await Promise.all([
    startGateway(),
    startFakeAnthropic({ apiKey: API_KEY }),
    startFakeOpenAI({ name: 'pii' }),
  ]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), anthropic?.close(), openai?.close()]);
});

const redactIn = {
  input_guardrails: [{ id: 'pii', 'default.pii': { categories: ['email'], redact: true } }],
};
const claude = () => ({ provider: 'anthropic', api_key: API_KEY, custom_host: anthropic.url });

async function sentToAnthropic(body: Record<string, unknown>): Promise<string> {
  const response = await postWithConfig(gateway, '/messages', { ...claude(), ...redactIn }, body);
  expect(response.status, await response.text()).toBe(200);
  return JSON.stringify(anthropic.requests.at(-1)?.body);
}

it('Messages: the system prompt and tool_result contents are redacted before Anthropic gets them', async () => {
  const system = await sentToAnthropic({
    model: 'claude-sonnet-4-5',
    max_tokens: 32,
    system: `The user's address is ${EMAIL}.`,
    messages: [{ role: 'user', content: `hello, write to ${EMAIL}` }],
  });
  expect(system).toContain("The user's address is [EMAIL_1].");
  expect(system).not.toContain(EMAIL);

  const toolResult = await sentToAnthropic({
    model: 'claude-sonnet-4-5',
    max_tokens: 32,
    tools: [{ name: 'lookup', input_schema: { type: 'object' } }],
    messages: [
      { role: 'user', content: 'who is the customer?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: `email ${EMAIL}` },
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: `or ${EMAIL}` }] },
        ],
      },
    ],
  });
  expect(toolResult).toContain('email [EMAIL_1]');
  expect(toolResult).not.toContain(EMAIL);
});

it('Responses, native: the instructions are redacted before OpenAI gets them', async () => {
  const config = { provider: 'openai', api_key: 'sk-test', custom_host: openai.url, ...redactIn };
  const response = await postWithConfig(gateway, '/responses', config, {
    model: 'gpt-4o-mini',
    instructions: `Reply to ${EMAIL} only.`,
    input: `hello ${EMAIL}`,
  });
  expect(response.status, await response.text()).toBe(200);
  const last = openai.requests.at(-1);
  expect(last?.path).toBe('/v1/responses');
  const sent = JSON.stringify(last?.body);
  expect(sent).toContain('Reply to [EMAIL_1] only.');
  expect(sent).not.toContain(EMAIL);
});

const toolUse = { type: 'tool_use', id: 'toolu_9', name: 'send_mail' };
const ask = {
  model: 'claude-sonnet-4-5',
  max_tokens: 32,
  tools: [{ name: 'send_mail', input_schema: { type: 'object' } }],
  messages: [{ role: 'user', content: 'mail jane' }],
};

it('Messages answer: a tool_use input with an email fails default.pii, as a chat tool call does', async () => {
  const config = {
    ...claude(),
    output_guardrails: [{ id: 'pii-out', deny: true, 'default.pii': { categories: ['email'] } }],
  };
  anthropic.enqueue({
    kind: 'json',
    body: {
      id: 'msg_01tool',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ ...toolUse, input: { to: EMAIL } }],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 9 },
    },
  });
  const response = await postWithConfig(gateway, '/messages', config, ask);
  const text = await response.text();
  expect(text).not.toContain(EMAIL);
  expect(response.status).toBe(446);
});

it('Messages stream: a tool_use input split across its deltas is redacted whole', async () => {
  const config = {
    ...claude(),
    output_guardrails: [{ id: 'pii-out', 'default.pii': { categories: ['email'], redact: true } }],
  };
  const json = JSON.stringify({ to: EMAIL });
  anthropic.enqueue({
    kind: 'stream',
    events: [
      {
        type: 'message_start',
        message: {
          id: 'msg_01tools',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 5, output_tokens: 1 },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { ...toolUse, input: {} } },
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: json.slice(0, 12) },
      },
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: json.slice(12) },
      },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 9 },
      },
      { type: 'message_stop' },
    ],
  });
  const raw = await postRawSse(
    `${gateway.url}/messages`,
    { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-config': JSON.stringify(config) },
    { ...ask, stream: true },
  );
  expect(raw.status).toBe(200);
  const events = eventsOf(raw.frames);
  const input = events
    .map((event) => (event as { delta?: { partial_json?: string } }).delta?.partial_json ?? '')
    .join('');
  expect(JSON.parse(input)).toEqual({ to: '[EMAIL_1]' });
  expect(JSON.stringify(events)).not.toContain(EMAIL);
});
