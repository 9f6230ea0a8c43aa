// The input checks of a config run on /v1/messages/count_tokens whatever answers it: Anthropic's own count,
// or the gateway's estimate on a target without one. A denying guardrail refuses the count with 446 in
// Anthropic's error shape; one that passes lets it through with its results. @anthropic-ai/sdk.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayAnthropic } from '../helpers/anthropic-client.js';

let gateway: TestGateway;
let openai: FakeUpstream;

beforeAll(async () => {
  [gateway, openai] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'counted' })]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), openai?.close()]);
});

function client(inputGuardrails: unknown[]): Anthropic {
  // OpenAI has no count of its own: the gateway estimates it.
  const config = {
    provider: 'openai',
    api_key: 'sk-oai',
    custom_host: openai.url,
    input_guardrails: inputGuardrails,
  };
  return gatewayAnthropic(gateway, config);
}

const count = (content: string) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user' as const, content }],
});

async function statusOf(promise: Promise<unknown>): Promise<number | undefined> {
  return promise.then(
    () => 200,
    (err: unknown) => (err as { status?: number }).status,
  );
}

describe('count_tokens estimated by the gateway', () => {
  it('a denying input guardrail refuses it (446)', async () => {
    const noSecret = {
      id: 'no-secret',
      deny: true,
      'default.contains': { words: ['secret'], operator: 'none' },
    };
    const anthropic = client([noSecret]);
    expect(await statusOf(anthropic.messages.countTokens(count('the secret is 42')))).toBe(446);
    const passed = await anthropic.messages.countTokens(count('nothing to hide'));
    expect(passed.input_tokens).toBeGreaterThan(0);
  });

  it('a guardrail blocking the messagesCountTokens type refuses it (446)', async () => {
    const noCounts = {
      id: 'no-counts',
      deny: true,
      'default.allowedRequestTypes': { allowed: ['messages'], blockedTypes: ['messagesCountTokens'] },
    };
    expect(await statusOf(client([noCounts]).messages.countTokens(count('hello')))).toBe(446);
  });
});
