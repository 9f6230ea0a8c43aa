/**
 * Resilience scenarios that need long real waits, all concurrent, in a file of their own so that vitest
 * runs it alongside the other files (about 70 s in all):
 * - the circuit breaker over a real outage, with the real cooldown: the primary answers 503 for 60 s and
 *   then recovers; a client calls every 2 s. The breaker must open after `failure_threshold` failures,
 *   the fallback must serve every request meanwhile (the primary sees only the probes), and the primary
 *   must serve again within one cooldown of its recovery;
 * - a first token that comes 20 s late, under the default deadline.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAIOptions, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, logsOf, target, traceHeaders, userMessage } from '../routing/support.js';

const OUTAGE_MS = 60_000;
const COOLDOWN_MS = 30_000;
const INTERVAL_MS = 2_000;
const THRESHOLD = 2;

let gateway: TestGateway;
let primary: FakeUpstream;
let fallback: FakeUpstream;
// The fake reads its default behaviour on every request, so clearing it ends the outage.
const primaryOptions: FakeOpenAIOptions = { name: 'primary', defaultBehaviour: { status: 503 } };

beforeAll(async () => {
  gateway = await startGateway();
  primary = await startFakeOpenAI(primaryOptions);
  fallback = await startFakeOpenAI({ name: 'fallback' });
});

// Fakes started by single tests.
const late: FakeUpstream[] = [];

afterAll(async () => {
  await gateway?.close();
  await Promise.all(late.map((f) => f.close()));
  await primary?.close();
  await fallback?.close();
});

interface Served {
  at: number;
  by: string | null;
  traceId: string;
}

describe.concurrent('long waits', () => {
  it(
    'opens, lets the fallback serve, probes once per cooldown, and closes after recovery',
    { timeout: 120_000 },
    async () => {
      const config = {
        strategy: { mode: 'fallback' },
        targets: [
          target(primary, { cb_config: { failure_threshold: THRESHOLD, cooldown_interval: COOLDOWN_MS } }),
          target(fallback),
        ],
      };
      const start = Date.now();
      const recoveredAt = start + OUTAGE_MS;
      const recovery = setTimeout(() => {
        primaryOptions.defaultBehaviour = undefined;
      }, OUTAGE_MS);

      const served: Served[] = [];
      let servedByPrimaryAfterRecovery = 0;
      try {
        // Bounded: at most outage + two cooldowns of requests, and three answers by the primary after it.
        for (let i = 0; i < (OUTAGE_MS + 2 * COOLDOWN_MS) / INTERVAL_MS; i++) {
          const { traceId, headers } = traceHeaders();
          const sdk = client(gateway, config, headers);
          const at = Date.now();
          let by: string | null;
          if (i % 2 === 0) {
            const { response, data } = await sdk.chat.completions
              .create({ model: 'gpt-4o-mini', messages: userMessage(`call ${i}`) })
              .withResponse();
            by = response.headers.get('x-gateway-last-used-option-index');
            expect(data.choices[0].message.content).toMatch(/^\[(primary|fallback)\] call \d+$/);
          } else {
            const { response, data: stream } = await sdk.chat.completions
              .create({ model: 'gpt-4o-mini', messages: userMessage(`call ${i}`), stream: true })
              .withResponse();
            by = response.headers.get('x-gateway-last-used-option-index');
            let text = '';
            for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
            expect(text).toMatch(/^\[(primary|fallback)\] call \d+$/);
          }
          served.push({ at, by, traceId });
          if (at >= recoveredAt && by === 'targets[0]') servedByPrimaryAfterRecovery += 1;
          if (servedByPrimaryAfterRecovery >= 3) break;
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, at + INTERVAL_MS - Date.now())));
        }
      } finally {
        clearTimeout(recovery);
      }

      // Every request was answered, by the fallback throughout the outage.
      const duringOutage = served.filter((s) => s.at < recoveredAt);
      expect(duringOutage.length).toBeGreaterThanOrEqual(25);
      expect(duringOutage.every((s) => s.by === 'targets[1]')).toBe(true);

      // The primary saw the failures that opened the circuit and one probe per cooldown, nothing more.
      const primaryCallsDuringOutage = primary.requests.filter((r) => r.receivedAt < recoveredAt).length;
      expect(primaryCallsDuringOutage).toBeGreaterThanOrEqual(THRESHOLD + 1);
      expect(primaryCallsDuringOutage).toBeLessThanOrEqual(THRESHOLD + Math.ceil(OUTAGE_MS / COOLDOWN_MS));

      // Back within one cooldown of the recovery, and it stays back.
      const firstBack = served.find((s) => s.at >= recoveredAt && s.by === 'targets[0]');
      expect(firstBack).toBeDefined();
      expect((firstBack as Served).at - recoveredAt).toBeLessThanOrEqual(COOLDOWN_MS + INTERVAL_MS);
      const afterBack = served.filter((s) => s.at > (firstBack as Served).at);
      expect(afterBack.every((s) => s.by === 'targets[0]')).toBe(true);

      // While open, the primary is skipped and the skip is recorded as a failed attempt.
      const skipped = duringOutage.find((s) => s.at - start > 10_000 && s.at - start < 20_000);
      const attempts = (await logsOf(gateway, (skipped as Served).traceId, 3)).filter((r) => r.is_attempt);
      expect(attempts.map((r) => [r.target, r.status, r.error_code])).toEqual([
        ['targets[0]', 503, 'circuit_open'],
        ['targets[1]', 200, null],
      ]);
    },
  );

  it('an open circuit with nothing else to answer → 503 circuit_open', async () => {
    const down = await startFakeOpenAI({ name: 'down', defaultBehaviour: { status: 502 } });
    try {
      const config = target(down, { cb_config: { failure_threshold: 1, cooldown_interval: 30_000 } });
      const sdk = client(gateway, config);
      const first = await sdk.chat.completions
        .create({ model: 'gpt-4o-mini', messages: userMessage('x') })
        .catch((e: unknown) => e);
      expect((first as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      const second = await sdk.chat.completions
        .create({ model: 'gpt-4o-mini', messages: userMessage('x') })
        .catch((e: unknown) => e);
      expect((second as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
      expect((second as InstanceType<typeof OpenAI.APIError>).code).toBe('circuit_open');
      expect(down.requests).toHaveLength(1);
    } finally {
      await down.close();
    }
  });

  it('first token 20 s late → still answered under the default deadline', { timeout: 60_000 }, async () => {
    const primary = await startFakeOpenAI({
      name: 'primary',
      defaultBehaviour: { firstByteDelayMs: 20_000 },
    });
    late.push(primary);
    const started = Date.now();
    const stream = await client(gateway, target(primary)).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: userMessage('tell me a story'),
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('[primary] tell me a story');
    expect(Date.now() - started).toBeGreaterThanOrEqual(20_000);
  });
});
