/**
 * Azure AI Foundry serves Claude models with Anthropic's Messages API (`/anthropic/v1/messages`), whose
 * stream ends with Anthropic's `event: error` when it fails; its other models answer on the OpenAI wire.
 * A pass-through stream of either is recorded as the error it ended with, with the status it stands for.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerFixturesDir } from '../../fakes/cohere/fixtures.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startWireUpstream, type WireReply, type WireUpstream } from '../../helpers/wire-upstream.js';
import { logsOf, traceHeaders } from '../../routing/support.js';

/** Anthropic's recorded stream as its wire sends it (`event: <type>`), ended after `count` events by its error. */
function claudeFailing(count: number): WireReply {
  const events = readFileSync(
    path.join(providerFixturesDir('anthropic'), 'anthropic-text.chunks.txt'),
    'utf8',
  )
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, count)
    .map((data) => ({ event: (JSON.parse(data) as { type: string }).type, data }));
  const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
  return { events: [...events, { event: 'error', data: JSON.stringify(error) }], done: false };
}

describe('an Azure AI pass-through stream ended by the provider’s error event', () => {
  let gateway: TestGateway;
  let upstream: WireUpstream;
  let next: WireReply | undefined;
  beforeAll(async () => {
    upstream = await startWireUpstream(() => {
      const reply = next ?? { json: JSON.stringify({ type: 'message' }) };
      next = undefined;
      return reply;
    });
    gateway = await startGateway({ rateLimitClock: () => Date.UTC(2030, 0, 1) });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const azureAI = () => ({ provider: 'azure-ai', api_key: 'az-pt', custom_host: upstream.url });

  const passThrough = async (
    route: string,
    body: object,
    headers: Record<string, string>,
    reply: WireReply,
  ) => {
    next = reply;
    const response = await fetch(`${gateway.url}/proxy${route}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify(azureAI()),
        ...headers,
      },
      body: JSON.stringify(body),
    });
    return { response, answer: await response.text() };
  };

  it("records a Claude model's Messages stream ended by Anthropic's overloaded_error as 529", async () => {
    const { traceId, headers } = traceHeaders();
    const body = { model: 'claude-sonnet-4-5', max_tokens: 64, stream: true, messages: [] };
    const { response, answer } = await passThrough('/anthropic/v1/messages', body, headers, claudeFailing(5));
    expect(response.status).toBe(200);
    expect(answer).toContain('event: error');
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toMatchObject({
      endpoint: 'passthrough',
      status: 529,
      error_code: 'overloaded_error',
      error_message: 'Overloaded',
      model: 'claude-sonnet-4-5-20250929',
      prompt_tokens: 12,
    });
  });

  it("still reads a Responses stream's error event as OpenAI's, its status from its code", async () => {
    const { traceId, headers } = traceHeaders();
    const error = {
      type: 'error',
      code: 'rate_limit_exceeded',
      message: 'Rate limit reached.',
      param: null,
      sequence_number: 3,
    };
    const body = { model: 'gpt-4.1-mini', stream: true, input: 'Hello' };
    await passThrough('/responses', body, headers, {
      events: [{ event: 'error', data: JSON.stringify(error) }],
      done: false,
    });
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded' });
  });
});
