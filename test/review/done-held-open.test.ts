/**
 * A provider that sends `data: [DONE]` and then keeps the connection open: the answer is complete, so the
 * client gets its `[DONE]` at once (at most the 1 s grace for the rest of a finished stream), not after
 * the whole stream-idle deadline.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postChat, startGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;
let upstream: Server;
let upstreamUrl: string;

const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
  id: 'chatcmpl-held',
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const events = [
        chunk({ role: 'assistant', content: '' }, null),
        chunk({ content: 'held' }, null),
        chunk({}, 'stop'),
        {
          ...chunk({}, null),
          choices: [],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        },
      ];
      // Everything, [DONE] included, in one write; then the connection is held open.
      res.write(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  gateway = await startGateway({ env: { GATEWAY_STREAM_IDLE_TIMEOUT_MS: '20000' } });
});

afterAll(async () => {
  await gateway?.close();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('a stream whose provider holds the connection after [DONE]', () => {
  it('ends for the client within the grace period', async () => {
    const started = performance.now();
    const response = await postChat(
      gateway,
      { provider: 'openai', api_key: 'sk-test', custom_host: upstreamUrl },
      { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      {},
      AbortSignal.timeout(10_000),
    );
    const text = await response.text();
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(text).toContain('held');
    expect(performance.now() - started).toBeLessThan(2_500);
  });
});
