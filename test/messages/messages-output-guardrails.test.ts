// Output guardrails and after-request hooks on Messages answered natively by Anthropic: they read the
// Message's text blocks and the stream's text deltas. A denying check answers 446 in Anthropic's error
// shape, and a denied stream delivers none of its text; a redacting check rewrites the relayed answer and
// stream. The @anthropic-ai/sdk reads the whole client stream.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAnthropicStreamFixture } from '../fakes/anthropic/fixtures.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { eventsOf, expectAnthropicShape, expectMessagesGrammar, postRawSse } from './anthropic-shapes.js';
import { gatewayAnthropic } from '../helpers/anthropic-client.js';

const API_KEY = 'sk-ant-output';
// What the recorded answers say (anthropic-text.json / .chunks.txt).
const SAID = /doing well/;

let gateway: TestGateway;
let anthropic: FakeAnthropic;

beforeAll(async () => {
  [gateway, anthropic] = await Promise.all([startGateway(), startFakeAnthropic({ apiKey: API_KEY })]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), anthropic?.close()]);
});

function client(outputGuardrails: unknown[]): Anthropic {
  const config = {
    provider: 'anthropic',
    api_key: API_KEY,
    custom_host: anthropic.url,
    output_guardrails: outputGuardrails,
  };
  return gatewayAnthropic(gateway, config);
}

const ask = {
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  messages: [{ role: 'user' as const, content: 'How are you?' }],
};

const denyWell = { id: 'no-wellness', deny: true, 'default.contains': { words: ['well'], operator: 'none' } };
const allowZebra = { id: 'no-zebra', deny: true, 'default.contains': { words: ['zebra'], operator: 'none' } };

/** An Anthropic text stream whose text is `text`, in two deltas. */
function textStream(text: string): Array<Record<string, unknown>> {
  const half = Math.floor(text.length / 2);
  return [
    {
      type: 'message_start',
      message: {
        id: 'msg_01pii',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 5, output_tokens: 1 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: text.slice(0, half) } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: text.slice(half) } },
    { type: 'content_block_stop', index: 0 },
    {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 9 },
    },
    { type: 'message_stop' },
  ];
}

describe('output guardrails on native Messages answers', () => {
  it('denies a JSON answer with 446 in Anthropic’s error shape', async () => {
    const error = await client([denyWell])
      .messages.create(ask)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(error).toBeInstanceOf(Anthropic.APIError);
    const apiError = error as InstanceType<typeof Anthropic.APIError>;
    expect(apiError.status).toBe(446);
    expectAnthropicShape('ErrorResponse', apiError.error);
    expect(JSON.stringify(apiError.error)).not.toMatch(SAID);
  });

  it('lets a passing answer through, with its hook results', async () => {
    const message = await client([allowZebra]).messages.create(ask);
    expect(message.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(SAID) });
    expect(
      (message as unknown as { hook_results: { after_request_hooks: unknown[] } }).hook_results,
    ).toMatchObject({ after_request_hooks: [{ id: 'no-zebra', verdict: true }] });
  });

  it('denies a stream before any of its text goes out', async () => {
    const stream = client([denyWell]).messages.stream(ask);
    const error = await stream.finalMessage().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(446);

    // On the wire: the error object, and nothing of the answer.
    const raw = await postRawSse(
      `${gateway.url}/messages`,
      {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify({
          provider: 'anthropic',
          api_key: API_KEY,
          custom_host: anthropic.url,
          output_guardrails: [denyWell],
        }),
      },
      { ...ask, stream: true },
    );
    expect(raw.status).toBe(446);
    expect(JSON.stringify(raw.frames)).not.toMatch(SAID);
  });

  it('relays a passing stream whole, event for event', async () => {
    const stream = client([allowZebra]).messages.stream(ask);
    const events: string[] = [];
    stream.on('streamEvent', (event) => events.push(event.type));
    const message = await stream.finalMessage();
    const text = readAnthropicStreamFixture('anthropic-text.chunks.txt')
      .map((line) => JSON.parse(line) as { delta?: { text?: string } })
      .map((event) => event.delta?.text ?? '')
      .join('');
    expect(message.content[0]).toMatchObject({ type: 'text', text });
    expect(events.at(-1)).toBe('message_stop');
  });

  it('redacts personal data in a native answer and stream', async () => {
    const pii = [{ id: 'pii', 'default.pii': { categories: ['email'], redact: true } }];
    const said = 'Write to jane.doe@example.com today';
    anthropic.enqueue({
      kind: 'json',
      body: {
        id: 'msg_01json',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [{ type: 'text', text: said }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 5, output_tokens: 6 },
      },
    });
    const message = await client(pii).messages.create(ask);
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Write to [EMAIL_1] today' });

    anthropic.enqueue({ kind: 'stream', events: textStream(said) });
    const raw = await postRawSse(
      `${gateway.url}/messages`,
      {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify({
          provider: 'anthropic',
          api_key: API_KEY,
          custom_host: anthropic.url,
          output_guardrails: pii,
        }),
      },
      { ...ask, stream: true },
    );
    expect(raw.status).toBe(200);
    const events = eventsOf(raw.frames);
    expectMessagesGrammar(events);
    expect(JSON.stringify(raw.frames)).not.toMatch(/jane\.doe/);
    const text = events.map((event) => (event as { delta?: { text?: string } }).delta?.text ?? '').join('');
    expect(text).toBe('Write to [EMAIL_1] today');
  });
});
