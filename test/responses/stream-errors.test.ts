/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// A provider's error inside a Responses stream that has begun: the client gets an `error` event (the
// provider's code, message and param, in the gateway's numbering) before the gateway's `response.failed`,
// as OpenAI sends them, so the openai SDK's stream helper throws an APIError with the provider's code as
// it does against OpenAI. Natively on OpenAI (the recorded insufficient_quota stream) and translated
// (Anthropic's `error` event mid-stream).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import { startWireUpstream, type WireReply, type WireUpstream } from '../helpers/wire-upstream.js';

const ANTHROPIC_KEY = 'sk-ant-stream-errors';

/** The recorded OpenAI stream of a Response that failed for want of quota: created, in_progress, an
 * `error` event (insufficient_quota) and `response.failed`. */
function recordedQuotaStream(): Array<{ event: string; data: string }> {
  const shared = process.env.SHARED_DIR ?? fileURLToPath(new URL('../../../shared', import.meta.url));
  const file = path.join(shared, 'reference/provider-fixtures/openai/responses/openai-error.1.chunks.txt');
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((data) => ({ event: (JSON.parse(data) as { type: string }).type, data }));
}

let gateway: TestGateway;
let upstream: WireUpstream;
let anthropic: FakeAnthropic;
let next: () => WireReply;

beforeAll(async () => {
  [gateway, upstream, anthropic] = await Promise.all([
    startGateway(),
    startWireUpstream(() => next()),
    startFakeAnthropic({ apiKey: ANTHROPIC_KEY }),
  ]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), upstream?.close(), anthropic?.close()]);
});

const openaiClient = () =>
  gatewayOpenAI(gateway, { provider: 'openai', api_key: 'sk-oai', custom_host: upstream.url });
const anthropicClient = () =>
  gatewayOpenAI(gateway, { provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: anthropic.url });

/** The events of a streamed answer as sent, read without the SDK (which stops at an `error` event). */
async function rawEvents(client: OpenAI, model: string): Promise<any[]> {
  const response = await client.responses.create({ model, input: 'Hello', stream: true }).asResponse();
  const text = await response.text();
  const events = text
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => {
      const name = /^event: (.*)$/m.exec(frame)?.[1];
      const event = JSON.parse(/^data: (.*)$/m.exec(frame)![1]);
      expect(name).toBe(event.type);
      return event;
    });
  for (const event of events) expectOpenAPIValid('ResponseStreamEvent', event);
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  return events;
}

describe('a provider error inside a Responses stream', () => {
  it("is an error event with OpenAI's code before response.failed, natively on OpenAI", async () => {
    next = () => ({ events: recordedQuotaStream(), done: false });
    const events = await rawEvents(openaiClient(), 'gpt-5-nano');
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'error',
      'response.failed',
    ]);
    const error = events[2];
    expectOpenAPIValid('ResponseErrorEvent', error);
    expect(error).toMatchObject({
      type: 'error',
      code: 'insufficient_quota',
      message: expect.stringContaining('You exceeded your current quota'),
      param: null,
      // As OpenAI's own error event carries it: what the SDKs read.
      error: { type: 'insufficient_quota', code: 'insufficient_quota', param: null },
    });
    // insufficient_quota is none of the Response's error codes: the failed Response says server_error.
    expect(events[3].response.status).toBe('failed');
    expect(events[3].response.error).toEqual({ code: 'server_error', message: error.message });
  });

  it("makes the openai SDK's stream helper throw the provider's code, as against OpenAI", async () => {
    next = () => ({ events: recordedQuotaStream(), done: false });
    const failure: any = await openaiClient()
      .responses.stream({ model: 'gpt-5-nano', input: 'Hello' })
      .finalResponse()
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(failure.code).toBe('insufficient_quota');
    expect(failure.message).toContain('You exceeded your current quota');
  });

  it("keeps the provider's code in response.failed when it is one of the Response's codes", async () => {
    next = () => ({
      events: recordedQuotaStream().map(({ event, data }) => ({
        event,
        data: data.replaceAll('insufficient_quota', 'invalid_prompt'),
      })),
      done: false,
    });
    const events = await rawEvents(openaiClient(), 'gpt-5-nano');
    expect(events.map((e) => e.type).slice(-2)).toEqual(['error', 'response.failed']);
    expect(events.at(-2).code).toBe('invalid_prompt');
    expect(events.at(-1).response.error.code).toBe('invalid_prompt');
  });

  it('is an error event before response.failed when a translated provider fails mid-stream', async () => {
    anthropic.enqueue({
      kind: 'stream',
      fixture: 'anthropic-text.chunks.txt',
      error: { type: 'overloaded_error', message: 'Overloaded', afterEvents: 6 },
    });
    const events = await rawEvents(anthropicClient(), 'claude-sonnet-4-5');
    expect(events.some((e) => e.type === 'response.output_text.delta')).toBe(true);
    const types = events.map((e) => e.type);
    expect(types.slice(-2)).toEqual(['error', 'response.failed']);
    expect(types.filter((t) => t === 'error')).toHaveLength(1);
    const error = events.at(-2);
    expectOpenAPIValid('ResponseErrorEvent', error);
    expect(error.message).toBe('Overloaded');
    expect(error.error).toMatchObject({ message: 'Overloaded', code: error.code, param: null });
    expect(events.at(-1).response.error.message).toBe('Overloaded');
  });

  it('throws from the stream helper when a translated provider fails mid-stream', async () => {
    anthropic.enqueue({
      kind: 'stream',
      fixture: 'anthropic-text.chunks.txt',
      error: { type: 'overloaded_error', message: 'Overloaded', afterEvents: 6 },
    });
    await expect(
      anthropicClient().responses.stream({ model: 'claude-sonnet-4-5', input: 'Hello' }).finalResponse(),
    ).rejects.toMatchObject({ message: expect.stringContaining('Overloaded') });
  });
});
