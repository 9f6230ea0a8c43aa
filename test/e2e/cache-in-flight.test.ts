/**
 * The simple cache and identical requests at once: while one cacheable request is with the provider, an
 * identical one on the same node waits for its answer and is answered from it (HIT) rather than asking the
 * provider too. A leader that keeps no answer (a failure, an answer an output check denied) answers nobody:
 * the others ask the provider themselves. Streams, refreshes, `max_age: 0` and other keys never wait.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  client,
  type Config,
  openAIFakesForFile,
  rawChatStream,
  target,
  userMessage,
} from '../routing/support.js';

let gateway: TestGateway;
const startFake = openAIFakesForFile();
/** A fake that takes its time, so that requests sent together are in flight together. */
const slowFake = () => startFake('flight', { latencyMs: 400 });

beforeAll(async () => {
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
});

const simple = { mode: 'simple' };

interface Asked {
  status: string | null;
  id: string | undefined;
  error: unknown;
}

async function ask(config: Config, question: string, headers: Record<string, string> = {}): Promise<Asked> {
  try {
    const { data, response } = await client(gateway, config, headers)
      .chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage(question) })
      .withResponse();
    return { status: response.headers.get('x-gateway-cache-status'), id: data.id, error: undefined };
  } catch (error) {
    return { status: null, id: undefined, error };
  }
}

const statuses = (answers: Asked[]) => answers.map((answer) => answer.status).sort();

describe.concurrent('identical requests in flight together', () => {
  it('share one provider call: the first asks, the others are answered from its answer', async () => {
    const upstream = await slowFake();
    const config = target(upstream, { cache: simple });
    const answers = await Promise.all(Array.from({ length: 5 }, () => ask(config, 'all at once')));
    expect(upstream.requests).toHaveLength(1);
    expect(statuses(answers)).toEqual(['HIT', 'HIT', 'HIT', 'HIT', 'MISS']);
    expect(new Set(answers.map((answer) => answer.id)).size).toBe(1);
    // The answer was stored as well.
    expect((await ask(config, 'all at once')).status).toBe('HIT');
    expect(upstream.requests).toHaveLength(1);
  });

  it('a leader that fails answers nobody: the others ask the provider themselves', async () => {
    const upstream = await slowFake();
    upstream.enqueue({ status: 500 });
    const config = target(upstream, { cache: simple });
    const answers = await Promise.all(Array.from({ length: 4 }, () => ask(config, 'the first one fails')));
    const failed = answers.filter((answer) => answer.error !== undefined);
    expect(failed).toHaveLength(1);
    expect(failed[0].error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(statuses(answers.filter((answer) => !answer.error))).toEqual(['MISS', 'MISS', 'MISS']);
    expect(upstream.requests).toHaveLength(4);
  });

  it('an answer an output check denied answers nobody: the others ask the provider themselves', async () => {
    const upstream = await slowFake();
    upstream.enqueue({ text: 'a banana' });
    const config = target(upstream, {
      cache: simple,
      output_guardrails: [
        { id: 'no-banana', deny: true, 'default.contains': { words: ['banana'], operator: 'none' } },
      ],
    });
    const answers = await Promise.all(Array.from({ length: 3 }, () => ask(config, 'which fruit?')));
    expect(
      answers.filter((answer) => answer.error instanceof OpenAI.APIError && answer.error.status === 446),
    ).toHaveLength(1);
    expect(statuses(answers.filter((answer) => !answer.error))).toEqual(['MISS', 'MISS']);
    expect(upstream.requests).toHaveLength(3);
  });

  it('never wait across cache namespaces, nor on a forced refresh or a config that stores nothing', async () => {
    const upstream = await slowFake();
    const config = target(upstream, { cache: simple });
    const answers = await Promise.all([
      ask(config, 'apart', { 'x-gateway-cache-namespace': 'a' }),
      ask(config, 'apart', { 'x-gateway-cache-namespace': 'b' }),
      ask(config, 'apart', { 'x-gateway-cache-namespace': 'a', 'x-gateway-cache-force-refresh': 'true' }),
    ]);
    expect(statuses(answers)).toEqual(['MISS', 'MISS', 'REFRESH']);
    expect(upstream.requests).toHaveLength(3);

    const storesNothing = target(upstream, { cache: { mode: 'simple', max_age: 0 } });
    const uncached = await Promise.all(
      Array.from({ length: 3 }, () => ask(storesNothing, 'kept for no time')),
    );
    expect(statuses(uncached)).toEqual(['MISS', 'MISS', 'MISS']);
    expect(upstream.requests).toHaveLength(6);
  });

  it('streams do not wait: each streams from the provider as it comes', async () => {
    const upstream = await slowFake();
    const config = target(upstream, { cache: simple });
    const body = { model: 'gpt-4o-mini', messages: userMessage('streams together') };
    const streams = await Promise.all(Array.from({ length: 3 }, () => rawChatStream(gateway, config, body)));
    expect(streams.map((stream) => stream.headers.get('x-gateway-cache-status'))).toEqual([
      'MISS',
      'MISS',
      'MISS',
    ]);
    expect(streams.every((stream) => stream.done && stream.text === '[flight] streams together')).toBe(true);
    expect(upstream.requests).toHaveLength(3);
  });
});
