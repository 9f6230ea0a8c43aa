/**
 * A stream's status is the answering target's: a target whose input check failed without denying (246)
 * and whose output guardrail then denied its held stream (446) hands over to the next fallback target,
 * whose stream goes out as its own hooks say (200 without any), never with the denied target's 246.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { rawChatStream, target } from '../routing/support.js';

let gateway: TestGateway;
let fake: FakeUpstream;
let backup: FakeUpstream;

beforeAll(async () => {
  [gateway, fake, backup] = await Promise.all([
    startGateway(),
    startFakeOpenAI({ name: 'denied' }),
    startFakeOpenAI({ name: 'backup' }),
  ]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), fake?.close(), backup?.close()]);
});

const notContaining = (words: string[]) => ({ 'default.contains': { words, operator: 'none' } });

describe('a held stream denied on one target, answered by the next', () => {
  it("goes out with the answering target's status", async () => {
    const guarded = {
      input_guardrails: [{ id: 'flag', ...notContaining(['password']) }],
      output_guardrails: [{ id: 'no-denied', deny: true, ...notContaining(['denied']) }],
    };
    const config = {
      strategy: { mode: 'fallback', on_status_codes: [446] },
      targets: [target(fake, guarded), target(backup)],
    };
    const stream = await rawChatStream(gateway, config, {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'password please' }],
    });
    expect(stream.text).toBe('[backup] password please');
    expect(stream.done).toBe(true);
    expect(stream.status).toBe(200);
  });
});
