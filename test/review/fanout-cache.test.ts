/**
 * A streamed answer that the gateway fanned out (`n` > 1 on a provider that gives one choice per call) is
 * stored in the cache as the client received it: one stream, choices numbered 0…n-1, one summed usage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';

const API_KEY = 'sk-ant-review';
let gateway: TestGateway;
let fake: FakeAnthropic;

beforeAll(async () => {
  fake = await startFakeAnthropic({ apiKey: API_KEY });
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

interface StreamRead {
  cacheStatus: string | null;
  chunks: Array<{
    id?: string;
    choices: Array<{ index: number; finish_reason?: string | null }>;
    usage?: unknown;
  }>;
  done: boolean;
}

async function stream(body: Record<string, unknown>): Promise<StreamRead> {
  const response = await postWithConfig(
    gateway,
    '/chat/completions',
    {
      provider: 'anthropic',
      api_key: API_KEY,
      custom_host: fake.url,
      cache: { mode: 'simple' },
    },
    body,
  );
  expect(response.status).toBe(200);
  const text = await response.text();
  const payloads = text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
  return {
    cacheStatus: response.headers.get('x-gateway-cache-status'),
    chunks: payloads.filter((p) => p !== '[DONE]').map((p) => JSON.parse(p) as StreamRead['chunks'][number]),
    done: payloads.at(-1) === '[DONE]',
  };
}

const choiceIndexes = (read: StreamRead) =>
  [...new Set(read.chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.index)))].sort();
const finishes = (read: StreamRead) =>
  read.chunks.flatMap((chunk) => chunk.choices.filter((c) => c.finish_reason).map((c) => c.index)).sort();

describe('a fanned-out stream in the cache', () => {
  it('replays choices 0 and 1 with one id and one usage chunk, as first sent', async () => {
    const body = {
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      n: 2,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'fan out and cache' }],
    };
    const first = await stream(body);
    expect(first.cacheStatus).toBe('MISS');
    expect(choiceIndexes(first)).toEqual([0, 1]);
    expect(finishes(first)).toEqual([0, 1]);
    expect(first.chunks.filter((chunk) => chunk.usage)).toHaveLength(1);

    const second = await stream(body);
    expect(second.cacheStatus).toBe('HIT');
    expect(second.done).toBe(true);
    expect(choiceIndexes(second)).toEqual([0, 1]);
    expect(finishes(second)).toEqual([0, 1]);
    expect(new Set(second.chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(second.chunks.filter((chunk) => chunk.usage)).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
  });
});
