/**
 * A request denied by an input check after a redacting one (`default.pii` with `redact`) is recorded as
 * the hooks left it, redacted, as an allowed request is recorded as its provider got it: the personal data
 * a config redacts never reaches the log, whichever way the call ends. fetch against a real gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { logsOf, postChat, target, traceHeaders } from '../routing/support.js';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  [gateway, fake] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'recorded' })]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), fake?.close()]);
});

const EMAIL = 'jane.doe@example.com';
const guarded = () => ({
  ...target(fake),
  input_guardrails: [
    { id: 'pii', 'default.pii': { categories: ['email'], redact: true } },
    { id: 'no-jailbreak', deny: true, 'default.contains': { words: ['jailbreak'], operator: 'none' } },
  ],
});

describe('a request denied after a redacting input check', () => {
  it('is recorded redacted, in the request record and the attempt record', async () => {
    const { traceId, headers } = traceHeaders();
    const response = await postChat(
      gateway,
      guarded(),
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `jailbreak, then mail ${EMAIL}` }] },
      headers,
    );
    expect(response.status).toBe(446);
    const records = await logsOf(gateway, traceId, 1);
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) {
      expect(JSON.stringify(record.request_body)).not.toContain(EMAIL);
      expect(JSON.stringify(record.request_body)).toContain('[EMAIL_1]');
    }
  });
});
