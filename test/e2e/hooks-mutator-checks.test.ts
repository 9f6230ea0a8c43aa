/**
 * A hook of type `mutator` runs its checks one after the other, each rewriting what the one before left,
 * as the reference gateway runs mutators: two redacting checks in one mutator hook both apply, before the
 * call (what the provider gets) and after it (what the client gets). The `openai` SDK against a real
 * gateway and a fake OpenAI upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, target } from '../routing/support.js';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  [gateway, fake] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'mutated' })]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), fake?.close()]);
});

const EMAIL = 'jane.doe@example.com';
const PHONE = '+44 20 7946 0958';
const SAID = `mail ${EMAIL} or call ${PHONE}`;

const scrub = (id: string) => ({
  id,
  type: 'mutator',
  checks: [
    { id: 'default.pii', parameters: { categories: ['email'], redact: true } },
    { id: 'default.pii', parameters: { categories: ['phone'], redact: true } },
  ],
});

describe('a mutator hook with two redacting checks', () => {
  it('before the call: the provider gets both values redacted', async () => {
    const config = { ...target(fake), before_request_hooks: [scrub('scrub-in')] };
    const answer = await client(gateway, config).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: SAID }],
    });
    const sent = JSON.stringify(fake.requests.at(-1)?.body);
    expect(sent).not.toContain(EMAIL);
    expect(sent).not.toContain(PHONE);
    expect(answer.choices[0].message.content).toBe('[mutated] mail [EMAIL_1] or call [PHONE_1]');
  });

  it('after the call: the client gets both values redacted', async () => {
    fake.enqueue({ text: SAID });
    const config = { ...target(fake), after_request_hooks: [scrub('scrub-out')] };
    const answer = await client(gateway, config).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'contact?' }],
    });
    expect(answer.choices[0].message.content).toBe('mail [EMAIL_1] or call [PHONE_1]');
  });
});
