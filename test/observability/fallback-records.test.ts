/**
 * The record of a call that fell back past a target with hooks: the request it keeps, and the hook
 * results, are the answering target's, not those of the target that failed before it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { postTraced, uniqueId, waitForLogs } from '../core/support.js';

let gateway: TestGateway;
let fake: FakeUpstream;
beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'fallback-records' });
  gateway = await startGateway();
});
afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

describe('a fallback past a target that redacted the request', () => {
  it('is recorded with the request the answering target got', async () => {
    const target = { provider: 'openai', api_key: 'sk-fallback-records', custom_host: fake.url };
    const redacting = {
      ...target,
      override_params: { model: 'fake-status-500' },
      input_guardrails: [{ id: 'pii-in', 'default.pii': { categories: ['email'], redact: true } }],
    };
    const traceId = uniqueId('fallback-records');
    const config = { strategy: { mode: 'fallback' }, targets: [redacting, target] };
    const response = await postTraced(
      gateway,
      '/chat/completions',
      traceId,
      { 'x-gateway-config': JSON.stringify(config) },
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'mail me at bob@example.com' }] },
    );
    expect(response.status).toBe(200);
    const sent = fake.requests.at(-1)!.body as Record<string, unknown>;
    expect(sent).toMatchObject({ model: 'gpt-4o-mini' });

    const [record] = await waitForLogs(gateway, { trace_id: traceId });
    expect(record).toMatchObject({ target: 'targets[1]', status: 200 });
    expect(record.request_body).toEqual(sent);
    expect(record.hook_results).toBeNull();
    const attempts = await waitForLogs(gateway, { trace_id: traceId }, 3, { withAttempts: true });
    const first = attempts.find((r) => r.is_attempt && r.target === 'targets[0]');
    expect(JSON.stringify(first?.request_body)).toContain('[EMAIL_1]');
  });
});
