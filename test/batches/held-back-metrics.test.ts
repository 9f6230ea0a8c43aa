/**
 * A batch line refused by a rate-limit policy waits out its Retry-After and runs again; the refusal it
 * waits out leaves no log record (the run that answers the line does), but it is measured: /metrics counts
 * it among the calls answered (gateway_requests_total) and failed (gateway_errors_total), as the policy's
 * decisions (gateway_rate_limit_decisions_total) count it, so an operator sees the lines being refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { call } from '../management/http.js';
import {
  chatLine,
  createBatch,
  finished,
  jsonl,
  sleep,
  target,
  until,
  upload,
  waitFor,
  SLOW_TEST_MS,
} from './support.js';

const TOKEN = 'held-back-metrics-token-0123';

let gateway: TestGateway;
let fake: FakeUpstream;
/** Where the rate-limit counters' clock stands: held still until the test moves it on. */
let rateLimitNow = Date.now();

beforeAll(async () => {
  [gateway, fake] = await Promise.all([
    startGateway({
      env: { GATEWAY_BATCH_POLL_MS: '50', GATEWAY_BATCH_CONCURRENCY: '32', GATEWAY_METRICS_TOKEN: TOKEN },
      rateLimitClock: () => rateLimitNow,
    }),
    startFakeOpenAI({ name: 'held-back-metrics' }),
  ]);
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

const SERIES = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The sum of the series of `name` whose labels include `labels`, read from a scrape of /metrics. */
async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const response = await fetch(`${gateway.origin}/metrics`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(response.status).toBe(200);
  let total = 0;
  for (const line of (await response.text()).split('\n')) {
    const series = SERIES.exec(line);
    if (!series || series[1] !== name) continue;
    const found = Object.fromEntries([...(series[2] ?? '').matchAll(LABEL)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, wanted]) => found[key] === wanted)) total += Number(series[3]);
  }
  return total;
}

const refusals = () => metric('gateway_errors_total', { endpoint: 'chat', code: 'rate_limit_exceeded' });
const answered = (statusClass: string) =>
  metric('gateway_requests_total', { endpoint: 'chat', status_class: statusClass });

describe('a batch line that waits out a rate-limit refusal', () => {
  it(
    'is measured for each refusal, and recorded once, for the run that answers it',
    async () => {
      const policy = await call(gateway.url, gateway.adminKey, 'POST', '/policies/rate-limits', {
        conditions: [{ key: 'metadata.case', value: 'held-back-metrics' }],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 60,
      });
      expect(policy.status, policy.text).toBe(200);
      const client = gatewayOpenAI(gateway, target(fake), {
        'x-gateway-metadata': JSON.stringify({ case: 'held-back-metrics' }),
      });
      const { stats } = gateway.server.deps.routing.rateLimits;
      const refusedBefore = stats.refused;
      const decisions = () => metric('gateway_rate_limit_decisions_total', { decision: 'refused' });
      const [refusalsBefore, clientErrorsBefore, decisionsBefore] = [
        await refusals(),
        await answered('4xx'),
        await decisions(),
      ];

      // Held still, the clock gives 60 lines room and none to the last until the test moves it on.
      const lines = Array.from({ length: 61 }, (_, i) => chatLine(`line-${i}`));
      const created = await createBatch(client, (await upload(client, jsonl(lines))).id);
      // The last line is refused, waits its Retry-After (a second) and is refused again.
      await until(() => stats.refused >= refusedBefore + 2, 30_000);
      const refused = stats.refused - refusedBefore;
      // Measured as the policy decided: each refusal a call that failed with a 4xx.
      await until(async () => (await refusals()) - refusalsBefore >= refused, 5_000);
      expect((await answered('4xx')) - clientErrorsBefore).toBeGreaterThanOrEqual(refused);
      expect((await decisions()) - decisionsBefore).toBeGreaterThanOrEqual(refused);

      rateLimitNow += 60_000;
      const batch = await waitFor(client, created.id, finished);
      expect(batch.request_counts).toEqual({ total: 61, completed: 61, failed: 0 });
      // The log has the runs that answered, none of the refusals. Its records are written in the
      // background (every 50 ms): waited for until the 61 runs' are there, then a while more, in which a
      // refusal's record, were there one, would have come too.
      const records = async () => {
        const logs = await call(
          gateway.url,
          gateway.adminKey,
          'GET',
          `/logs?metadata.batch_id=${created.id}&limit=100`,
        );
        return (logs.body as { data: Array<{ status: number }> }).data.map((r) => r.status);
      };
      await until(async () => (await records()).length >= 61, 10_000);
      await sleep(200);
      expect(await records()).toEqual(Array.from({ length: 61 }, () => 200));
    },
    SLOW_TEST_MS,
  );
});
