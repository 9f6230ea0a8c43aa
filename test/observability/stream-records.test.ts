/**
 * The record of a streamed call that broke after the client had part of the answer: it holds the text the
 * client was sent beside the error, not the error alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { CHAT_BODY, postTraced, providerHeaders, sseData, uniqueId, waitForLogs } from '../core/support.js';

let gateway: TestGateway;
let fake: FakeUpstream;
beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'broken' });
  gateway = await startGateway();
});
afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

/** Streams a chat completion; the text the client read, and the call's record. */
async function brokenStream(): Promise<{ sent: string; record: Record<string, unknown> }> {
  const traceId = uniqueId('broken');
  const response = await fetch(`${gateway.url}/chat/completions`, {
    method: 'POST',
    headers: providerHeaders(gateway, fake, {
      'content-type': 'application/json',
      'x-gateway-trace-id': traceId,
    }),
    body: JSON.stringify({ ...CHAT_BODY, stream: true }),
  });
  expect(response.status).toBe(200);
  let sent = '';
  for (const data of sseData(await response.text())) {
    if (data === '[DONE]') continue;
    const chunk = JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> };
    sent += chunk.choices?.[0]?.delta?.content ?? '';
  }
  const [record] = await waitForLogs(gateway, { trace_id: traceId });
  return { sent, record: record as unknown as Record<string, unknown> };
}

describe('a stream that broke after its first chunks', () => {
  it('is recorded with the text sent and the error, after an error event from the provider', async () => {
    fake.enqueue({ chunks: 10, errorEventAfter: 4 });
    const { sent, record } = await brokenStream();
    expect(sent.length).toBeGreaterThan(0);
    expect(record).toMatchObject({ status: 502, stream: true, error_code: 'stream_error' });
    expect(record.response_body).toEqual({
      choices: [{ index: 0, content: sent }],
      error: expect.objectContaining({ code: 'stream_error' }),
    });
  });

  it('is recorded with the text sent and the error, when the provider closed the connection', async () => {
    fake.enqueue({ chunks: 10, cutAfter: 4 });
    const { sent, record } = await brokenStream();
    expect(sent.length).toBeGreaterThan(0);
    expect(record.response_body).toEqual({
      choices: [{ index: 0, content: sent }],
      error: expect.objectContaining({ code: 'upstream_unreachable' }),
    });
  });
});

describe('the time to first byte of a call that fell back', () => {
  const fallback = () => ({
    'x-gateway-config': JSON.stringify({
      strategy: { mode: 'fallback' },
      targets: [0, 1].map(() => ({ provider: 'openai', api_key: 'sk-fallback-test', custom_host: fake.url })),
    }),
  });

  it('is counted from the call’s start on a pass-through too', async () => {
    fake.enqueue({ status: 503, firstByteDelayMs: 400 });
    const traceId = uniqueId('ttfb');
    const response = await postTraced(gateway, '/some/provider/path', traceId, fallback(), '{}');
    expect(response.status).toBe(200);
    await response.text();
    const [record] = await waitForLogs(gateway, { trace_id: traceId });
    expect(record).toMatchObject({ endpoint: 'passthrough', target: 'targets[1]' });
    expect(record.ttfb_ms).toBeGreaterThanOrEqual(400);
  });

  it.each([true, false])(
    'is counted from the call’s start, not the answering attempt’s (stream: %s)',
    async (stream) => {
      fake.enqueue({ status: 503, firstByteDelayMs: 400 });
      const traceId = uniqueId('ttfb');
      const response = await postTraced(gateway, '/chat/completions', traceId, fallback(), {
        ...CHAT_BODY,
        stream,
      });
      expect(response.status).toBe(200);
      await response.text();
      const [record] = await waitForLogs(gateway, { trace_id: traceId });
      expect(record).toMatchObject({ status: 200, target: 'targets[1]', stream });
      expect(record.ttfb_ms).toBeGreaterThanOrEqual(400);
      expect(record.ttfb_ms).toBeLessThanOrEqual(record.latency_ms);
    },
  );
});
