/**
 * A tokens policy and streams that break mid-way. An Anthropic stream reports its usage in its first event
 * (`message_start`: the input and one output token); cut after that, the answer's only usage is that
 * first count, though much text went out. A cut stream is settled to the larger of the usage it reported
 * and the estimate of its input and the text that went by, whatever the provider and the client's API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { anthropicTextEvents } from '../fakes/anthropic/text-events.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayHeaders } from '../helpers/openai-client.js';
import { target } from '../routing/support.js';
import { client, ok } from '../management/http.js';

const ANTHROPIC_KEY = 'sk-ant-cut-stream';
const ANSWER = 'y'.repeat(8_000);
const LIMIT = 100_000;
const MAX_TOKENS = 64;
const messages = [{ role: 'user', content: 'write a long line of y' }];
/** What a call reserves: its input (four characters a token) and its max_tokens. */
const reservation = Math.ceil(JSON.stringify(messages).length / 4) + MAX_TOKENS;
/** What a cut stream of ANSWER is settled to: its input and the text that went by. */
const estimate = Math.ceil((JSON.stringify(messages).length + ANSWER.length) / 4);

describe('a stream cut mid-way under a tokens policy', () => {
  let gateway: TestGateway;
  let anthropic: FakeAnthropic;
  let openai: FakeUpstream;
  beforeAll(async () => {
    [gateway, anthropic, openai] = await Promise.all([
      startGateway({ rateLimitClock: () => Date.UTC(2030, 0, 1) }),
      startFakeAnthropic({ apiKey: ANTHROPIC_KEY }),
      startFakeOpenAI({ name: 'cut-stream-charge' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([gateway?.close(), anthropic?.close(), openai?.close()]);
  });

  const anthropicTarget = () => ({
    provider: 'anthropic',
    api_key: ANTHROPIC_KEY,
    custom_host: anthropic.url,
  });

  /** A policy of LIMIT tokens a day per API key, met by the calls whose metadata `case` is `name`. */
  const tokenPolicy = (name: string) =>
    ok(
      client(gateway.url, gateway.adminKey).post('/policies/rate-limits', {
        conditions: [{ key: 'metadata.case', value: name }],
        group_by: [{ key: 'api_key' }],
        type: 'tokens',
        unit: 'rpd',
        value: LIMIT,
      }),
    );

  /** A streamed call's whole answer as text (it ends with the in-band error), and its answer's headers. */
  const post = async (path: string, name: string, config: Record<string, unknown>, stream: boolean) => {
    const response = await fetch(`${gateway.origin}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...gatewayHeaders(gateway, config, { 'x-gateway-metadata': JSON.stringify({ case: name }) }),
      },
      body: JSON.stringify({ model: 'claude-opus-5', max_tokens: MAX_TOKENS, messages, stream }),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };

  /** The tokens left after the next call's reservation, which sees the cut call settled. */
  const remainingAfterNext = async (name: string, config: Record<string, unknown>) => {
    const next = await post('/v1/chat/completions', name, config, false);
    expect(next.status).toBe(200);
    return Number(next.headers.get('x-ratelimit-remaining-tokens'));
  };

  /** Anthropic's stream of ANSWER, its usage in message_start, cut by an error after the text. */
  const cutAnthropicStream = () =>
    anthropic.enqueue({
      kind: 'stream',
      events: anthropicTextEvents(ANSWER, { id: 'msg_cut', model: 'claude-opus-5', inputTokens: 10 }),
      error: { type: 'overloaded_error', message: 'Overloaded', afterEvents: 3 },
    });

  it('charges a cut Anthropic stream on /v1/messages the text that went by', async () => {
    await tokenPolicy('cut-messages');
    cutAnthropicStream();
    const cut = await post('/v1/messages', 'cut-messages', anthropicTarget(), true);
    expect(cut.status).toBe(200);
    expect(cut.text).toContain(ANSWER);
    expect(cut.text).toContain('event: error');
    anthropic.enqueue({ kind: 'json', fixture: 'anthropic-text.json' });
    expect(await remainingAfterNext('cut-messages', anthropicTarget())).toBe(LIMIT - estimate - reservation);
  });

  it('charges a cut Anthropic stream on /v1/chat/completions the text that went by', async () => {
    await tokenPolicy('cut-chat-anthropic');
    cutAnthropicStream();
    const cut = await post('/v1/chat/completions', 'cut-chat-anthropic', anthropicTarget(), true);
    expect(cut.status).toBe(200);
    expect(cut.text).toContain(ANSWER);
    expect(cut.text).toContain('"error"');
    anthropic.enqueue({ kind: 'json', fixture: 'anthropic-text.json' });
    expect(await remainingAfterNext('cut-chat-anthropic', anthropicTarget())).toBe(
      LIMIT - estimate - reservation,
    );
  });

  it('charges a cut OpenAI stream the text that went by', async () => {
    await tokenPolicy('cut-chat-openai');
    const chunk = (delta: object) => ({
      id: 'chatcmpl-cut',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: null }],
    });
    const events = [chunk({ role: 'assistant', content: '' }), chunk({ content: ANSWER })];
    const error = { error: { message: 'overloaded', type: 'server_error', param: null, code: null } };
    openai.enqueue({
      status: 200,
      body: [...events, error].map((event) => `data: ${JSON.stringify(event)}\n\n`).join(''),
      headers: { 'content-type': 'text/event-stream; charset=utf-8' },
    });
    const cut = await post('/v1/chat/completions', 'cut-chat-openai', target(openai), true);
    expect(cut.status).toBe(200);
    expect(cut.text).toContain(ANSWER);
    expect(cut.text).toContain('"error"');
    expect(await remainingAfterNext('cut-chat-openai', target(openai))).toBe(LIMIT - estimate - reservation);
  });
});
