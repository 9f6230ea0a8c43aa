/**
 * A tokens policy and model calls whose provider answers without usage, through the `openai` SDK. A call
 * that sets no `max_tokens` reserves its input only; left at that reservation, its answer's tokens would
 * never be counted, and a provider (or a model the client chose) that omits usage would take the policy out
 * of play. Such an answer is settled instead to an estimate of its input and its answer's text, four
 * characters a token, as a pass-through's bytes are: a whole answer, and a stream as its chunks went by.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { target } from '../routing/support.js';
import { client, ok } from '../management/http.js';

const ANSWER = 'y'.repeat(8_000);
const LIMIT = 100_000;

describe('model calls whose answers carry no usage under a tokens policy', () => {
  let gateway: TestGateway;
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'model-token-estimate' });
    gateway = await startGateway({ rateLimitClock: () => Date.UTC(2030, 0, 1) });
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const sdk = (name: string) =>
    new OpenAI({
      baseURL: gateway.url,
      apiKey: 'sk-client',
      maxRetries: 0,
      defaultHeaders: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify(target(fake)),
        'x-gateway-metadata': JSON.stringify({ case: name }),
      },
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

  const messages = [{ role: 'user' as const, content: 'write a long line of y' }];
  const reservation = Math.ceil(JSON.stringify(messages).length / 4);
  const estimate = Math.ceil((JSON.stringify(messages).length + ANSWER.length) / 4);

  /** A chat completion as a provider that reports no usage answers it. */
  const withoutUsage = {
    id: 'chatcmpl-no-usage',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: ANSWER, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
  };

  /** The same as a stream of four chunks of text, with no usage chunk although the gateway asked for one. */
  const streamWithoutUsage = () => {
    const chunk = (delta: object, finish: string | null = null) => ({
      id: 'chatcmpl-no-usage',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
    const quarter = ANSWER.length / 4;
    const events = [
      chunk({ role: 'assistant', content: '' }),
      ...[0, 1, 2, 3].map((i) => chunk({ content: ANSWER.slice(i * quarter, (i + 1) * quarter) })),
      chunk({}, 'stop'),
    ];
    return events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('') + 'data: [DONE]\n\n';
  };

  const remainingAfterNext = async (name: string) => {
    const next = await sdk(name).chat.completions.create({ model: 'gpt-4o-mini', messages }).withResponse();
    return Number(next.response.headers.get('x-ratelimit-remaining-tokens'));
  };

  it('settles a whole answer without usage to its input and its text', async () => {
    await tokenPolicy('model-json');
    fake.enqueue({ status: 200, body: withoutUsage });
    const first = await sdk('model-json')
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .withResponse();
    expect(first.data.usage).toBeUndefined();
    expect(first.data.choices[0].message.content).toBe(ANSWER);
    // Reserved: its input only, as it set no max_tokens.
    expect(first.response.headers.get('x-ratelimit-remaining-tokens')).toBe(String(LIMIT - reservation));
    // The next call sees the first settled to the estimate (and its own reservation).
    expect(await remainingAfterNext('model-json')).toBe(LIMIT - estimate - reservation);
  });

  it('settles a stream without usage to its input and the text that went by', async () => {
    await tokenPolicy('model-stream');
    fake.enqueue({
      status: 200,
      body: streamWithoutUsage(),
      headers: { 'content-type': 'text/event-stream; charset=utf-8' },
    });
    const stream = await sdk('model-stream').chat.completions.create({
      model: 'gpt-4o-mini',
      messages,
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(ANSWER);
    expect(await remainingAfterNext('model-stream')).toBe(LIMIT - estimate - reservation);
  });

  it('settles an answer without usage to its input as its reservation counted it, inline media included', async () => {
    await tokenPolicy('model-media');
    // A picture's base64 counts as 1,000 tokens (4,000 characters), not as its 60,000 characters.
    const picture = `data:image/png;base64,${'A'.repeat(60_000)}`;
    const withPicture = [
      {
        role: 'user' as const,
        content: [
          { type: 'text' as const, text: 'write a long line of y' },
          { type: 'image_url' as const, image_url: { url: picture } },
        ],
      },
    ];
    const counted = JSON.stringify(withPicture).length - picture.length + 4_000;
    fake.enqueue({ status: 200, body: withoutUsage });
    const first = await sdk('model-media')
      .chat.completions.create({ model: 'gpt-4o-mini', messages: withPicture })
      .withResponse();
    expect(first.response.headers.get('x-ratelimit-remaining-tokens')).toBe(
      String(LIMIT - Math.ceil(counted / 4)),
    );
    // Settled to that input and the answer's text: the input counted once, as it was reserved.
    expect(await remainingAfterNext('model-media')).toBe(
      LIMIT - Math.ceil((counted + ANSWER.length) / 4) - reservation,
    );
  });

  it('still settles to the usage an answer gives', async () => {
    await tokenPolicy('model-usage');
    const first = await sdk('model-usage').chat.completions.create({ model: 'gpt-4o-mini', messages });
    const used = first.usage?.total_tokens as number;
    expect(used).toBeGreaterThan(0);
    expect(await remainingAfterNext('model-usage')).toBe(LIMIT - used - reservation);
  });
});
