/**
 * Output checks that can neither deny nor rewrite a stream (a webhook without `deny`) read it once it has
 * gone out: the client's stream ends when the provider's does, not when a slow check answers, and the
 * check's result still reaches the log record. The `openai` SDK and fetch against a real gateway.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, logsOf, rawChatStream, target, traceHeaders } from '../routing/support.js';

const SLOW_MS = 3000;
// A stream that ends well before the check answers did not wait for it.
const WELL_BEFORE_MS = SLOW_MS - 1000;

let gateway: TestGateway;
let fake: FakeUpstream;
let webhook: Server;
let webhookUrl: string;

beforeAll(async () => {
  [gateway, fake] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'ends' })]);
  // Answers after SLOW_MS, passing the check.
  webhook = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ verdict: true, explanation: 'looked at it' }));
      }, SLOW_MS);
    });
  });
  await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
  webhookUrl = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/audit`;
});

afterAll(async () => {
  webhook?.closeAllConnections();
  await Promise.all([
    gateway?.close(),
    fake?.close(),
    new Promise<void>((resolve) => (webhook ? webhook.close(() => resolve()) : resolve())),
  ]);
});

const audited = () => ({
  ...target(fake),
  output_guardrails: [{ id: 'audit', 'default.webhook': { webhookURL: webhookUrl } }],
});
const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'tell me' }] };

describe('a stream under output checks that cannot deny', () => {
  it('ends as the provider ends it; the slow check is recorded in the log once it answers', async () => {
    const { traceId, headers } = traceHeaders();
    const stream = await rawChatStream(gateway, audited(), ask, headers);
    expect(stream.status).toBe(200);
    expect(stream.done).toBe(true);
    expect(stream.text).toBe('[ends] tell me');
    expect(stream.elapsedMs).toBeLessThan(WELL_BEFORE_MS);

    const [record] = (await logsOf(gateway, traceId, 1)).filter((r) => !r.is_attempt);
    expect(record.hook_results).toMatchObject({
      after_request_hooks: [
        { id: 'audit', verdict: true, checks: [{ id: 'default.webhook', explanation: 'looked at it' }] },
      ],
    });
  });

  it('the SDK reads the whole stream without waiting for the check', async () => {
    const started = performance.now();
    const stream = await client(gateway, audited()).chat.completions.create({ ...ask, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('[ends] tell me');
    expect(performance.now() - started).toBeLessThan(WELL_BEFORE_MS);
  });
});
