/**
 * A batch line or a background response refused by a rate-limit policy waits out the refusal and runs
 * again. The run refused leaves no log record, but it is in the trace: a span of the operation, marked
 * held back with the refusal's code, the policy and the wait, its status unset (the refusal is waited out,
 * not the call's failure), beside the span of the run that answers.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../fakes/otlp/receiver.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { call } from '../management/http.js';
import {
  chatLine,
  createBatch,
  finished,
  jsonl,
  target,
  until,
  upload,
  waitFor,
  SLOW_TEST_MS,
} from '../batches/support.js';

const SERVER = 2;
const UNSET = 0;

const isHeldBack = (span: ReceivedSpan) => span.attributes['gateway.held_back.reason'] !== undefined;

async function rateLimitPolicy(name: string): Promise<string> {
  const policy = await call(gateway.url, gateway.adminKey, 'POST', '/policies/rate-limits', {
    conditions: [{ key: 'metadata.case', value: name }],
    group_by: [{ key: 'api_key' }],
    type: 'requests',
    unit: 'rpm',
    value: 60,
  });
  expect(policy.status, policy.text).toBe(200);
  return (policy.body as { id: string }).id;
}

let gateway: TestGateway;
let fake: FakeUpstream;
let receiver: OtlpReceiver;
/** Where the rate-limit counters' clock stands: held still until the test moves it on. */
let rateLimitNow = Date.now();

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  [gateway, fake] = await Promise.all([
    startGateway({
      env: {
        GATEWAY_BATCH_POLL_MS: '50',
        GATEWAY_BATCH_CONCURRENCY: '32',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '20',
      },
      rateLimitClock: () => rateLimitNow,
    }),
    startFakeOpenAI({ name: 'held-back-spans' }),
  ]);
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
  await receiver?.close();
});

describe('a batch line that waits out a rate-limit refusal', () => {
  it(
    'leaves a span of each refused run in the batch’s trace, marked held back, beside the answering run’s',
    async () => {
      const policyId = await rateLimitPolicy('held-back-spans');
      const traceId = randomBytes(16).toString('hex');
      const client = gatewayOpenAI(gateway, target(fake), {
        'x-gateway-metadata': JSON.stringify({ case: 'held-back-spans' }),
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      });
      const { stats } = gateway.server.deps.routing.rateLimits;
      const refusedBefore = stats.refused;

      // Held still, the clock gives 60 lines room and none to the last until the test moves it on.
      const lines = Array.from({ length: 61 }, (_, i) => chatLine(`line-${i}`));
      const created = await createBatch(client, (await upload(client, jsonl(lines))).id);
      await until(() => stats.refused > refusedBefore, 30_000);
      const ofTrace = (spans: ReceivedSpan[]) =>
        spans.filter((span) => span.traceId === traceId && span.kind === SERVER);
      const [held] = ofTrace(await receiver.waitFor((spans) => ofTrace(spans).some(isHeldBack))).filter(
        isHeldBack,
      );
      expect(held.name).toBe('chat gpt-4o-mini');
      expect(held.statusCode).toBe(UNSET);
      expect(held.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o-mini',
        'http.response.status_code': 429,
        'gateway.held_back.reason': 'rate_limit_exceeded',
        'gateway.held_back.wait_ms': 1000,
        'gateway.rate_limit.policy_id': policyId,
      });
      expect(held.attributes['error.type']).toBeUndefined();

      rateLimitNow += 60_000;
      const batch = await waitFor(client, created.id, finished);
      expect(batch.request_counts).toEqual({ total: 61, completed: 61, failed: 0 });
      // Every line's answering run is in the same trace, none of them marked.
      const answered = await receiver.waitFor(
        (spans) => ofTrace(spans).filter((span) => !isHeldBack(span)).length >= 61,
      );
      const runs = ofTrace(answered).filter((span) => !isHeldBack(span));
      expect(runs.map((span) => span.attributes['http.response.status_code'])).toEqual(
        Array.from({ length: 61 }, () => 200),
      );
      // One span per refused run.
      expect(ofTrace(answered).filter(isHeldBack)).toHaveLength(stats.refused - refusedBefore);
    },
    SLOW_TEST_MS,
  );
});

describe('a background response that waits out a rate-limit refusal', () => {
  it(
    'leaves a span of the refused run in the response’s trace, marked held back',
    async () => {
      const policyId = await rateLimitPolicy('held-back-response');
      const traceId = randomBytes(16).toString('hex');
      const client = gatewayOpenAI(gateway, target(fake), {
        'x-gateway-metadata': JSON.stringify({ case: 'held-back-response' }),
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      });
      // The minute's 60 requests, taken in the foreground: the response's run is refused.
      for (let i = 0; i < 60; i++) {
        await client.chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: `${i}` }],
        });
      }
      const created = await client.responses.create({
        model: 'gpt-4o-mini',
        input: 'Limited',
        background: true,
      });
      const ofTrace = (spans: ReceivedSpan[]) =>
        spans.filter(
          (span) => span.traceId === traceId && span.kind === SERVER && span.name === 'chat gpt-4o-mini',
        );
      const [held] = ofTrace(await receiver.waitFor((spans) => ofTrace(spans).some(isHeldBack))).filter(
        isHeldBack,
      );
      expect(held.statusCode).toBe(UNSET);
      expect(held.attributes).toMatchObject({
        'http.response.status_code': 429,
        'gateway.held_back.reason': 'rate_limit_exceeded',
        'gateway.held_back.wait_ms': 1000,
        'gateway.rate_limit.policy_id': policyId,
      });

      rateLimitNow += 60_000;
      await until(async () => (await client.responses.retrieve(created.id)).status === 'completed', 30_000);
      // The run that answers, after it, in the same trace: the response's only span not held back.
      const answering = (spans: ReceivedSpan[]) =>
        ofTrace(spans).filter((span) => span.startNs > held.startNs && !isHeldBack(span));
      const answered = answering(await receiver.waitFor((spans) => answering(spans).length > 0));
      expect(answered.map((span) => span.attributes['http.response.status_code'])).toEqual([200]);
    },
    SLOW_TEST_MS,
  );
});
