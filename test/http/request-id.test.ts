/**
 * The request id each SDK gives its user (`_request_id`, `APIError.requestID`): the `openai` SDK reads
 * `x-request-id`, the Anthropic SDK `request-id`. Every answer of an OpenAI-shaped route carries
 * `x-request-id` and every answer of /v1/messages `request-id`: the provider's request id when it gave
 * one, under either name (a translated answer included), else the gateway's trace id (its own errors).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { gatewayAnthropic } from '../helpers/anthropic-client.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

const ANTHROPIC_KEY = 'sk-ant-request-id';
const TRACE = 'trace-request-id-1';
/** The fake OpenAI's `x-request-id` (as OpenAI's: `req_` and 32 characters). */
const OPENAI_REQUEST_ID = /^req_[0-9A-Za-z]{32}$/;

let gateway: TestGateway;
let anthropic: FakeAnthropic;
let openai: FakeUpstream;

beforeAll(async () => {
  [gateway, anthropic, openai] = await Promise.all([
    startGateway(),
    startFakeAnthropic({ apiKey: ANTHROPIC_KEY }),
    startFakeOpenAI({ name: 'request-id' }),
  ]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), anthropic?.close(), openai?.close()]);
});

const toAnthropic = () => ({ provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: anthropic.url });
const toOpenAI = () => ({ provider: 'openai', api_key: 'sk-oai', custom_host: openai.url });
const chat = { model: 'claude-sonnet-4-5', messages: [{ role: 'user' as const, content: 'Hi' }] };
const message = {
  model: 'gpt-4o-mini',
  max_tokens: 64,
  messages: [{ role: 'user' as const, content: 'Hi' }],
};

async function failure<T>(promise: Promise<unknown>): Promise<T> {
  return promise.then(
    () => {
      throw new Error('the request succeeded');
    },
    (err: unknown) => err as T,
  );
}

describe('the openai SDK', () => {
  it("gets Anthropic's request-id as x-request-id on a translated answer, stream and error", async () => {
    const client = gatewayOpenAI(gateway, toAnthropic());
    const answer = await client.chat.completions.create(chat);
    expect(answer._request_id).toMatch(/^req_fake_\d+$/);

    const streamed = await client.chat.completions.create({ ...chat, stream: true }).withResponse();
    expect(streamed.request_id).toMatch(/^req_fake_\d+$/);
    for await (const _chunk of streamed.data) void _chunk;

    anthropic.enqueue({ kind: 'error', status: 400, type: 'invalid_request_error', message: 'bad' });
    const error = await failure<InstanceType<typeof OpenAI.APIError>>(client.chat.completions.create(chat));
    expect(error.status).toBe(400);
    expect(error.requestID).toMatch(/^req_fake_error_\d+$/);
  });

  it('gets the gateway trace id as x-request-id on its own errors', async () => {
    const client = gatewayOpenAI(gateway, toAnthropic(), { 'x-gateway-trace-id': TRACE });
    const invalid = await failure<InstanceType<typeof OpenAI.APIError>>(
      client.chat.completions.create({ ...chat, temperature: 'hot' as unknown as number }),
    );
    expect(invalid.status).toBe(400);
    expect(invalid.requestID).toBe(TRACE);

    const unknownKey = gatewayOpenAI(gateway, toAnthropic(), {
      'x-gateway-api-key': 'not-a-key',
      'x-gateway-trace-id': TRACE,
    });
    const denied = await failure<InstanceType<typeof OpenAI.APIError>>(unknownKey.models.list());
    expect(denied.status).toBe(401);
    expect(denied.requestID).toBe(TRACE);
  });

  it("keeps OpenAI's own x-request-id on a native answer", async () => {
    const answer = await gatewayOpenAI(gateway, toOpenAI())
      .chat.completions.create({ ...chat, model: 'gpt-4o-mini' })
      .withResponse();
    expect(answer.request_id).toMatch(OPENAI_REQUEST_ID);
  });
});

describe('the Anthropic SDK on /v1/messages', () => {
  it("gets OpenAI's x-request-id as request-id on a translated answer, stream and error", async () => {
    const client = gatewayAnthropic(gateway, toOpenAI());
    const answer = await client.messages.create(message).withResponse();
    expect(answer.request_id).toMatch(OPENAI_REQUEST_ID);

    const streamed = await client.messages.create({ ...message, stream: true }).withResponse();
    expect(streamed.request_id).toMatch(OPENAI_REQUEST_ID);
    for await (const _event of streamed.data) void _event;

    openai.enqueue({ status: 500 });
    const error = await failure<InstanceType<typeof Anthropic.APIError>>(client.messages.create(message));
    expect(error.status).toBe(500);
    expect(error.requestID).toMatch(OPENAI_REQUEST_ID);
  });

  it('gets the gateway trace id as request-id on its own errors', async () => {
    const client = gatewayAnthropic(gateway, toOpenAI(), { 'x-gateway-trace-id': TRACE });
    const invalid = await failure<InstanceType<typeof Anthropic.APIError>>(
      client.messages.create({ ...message, max_tokens: 'many' as unknown as number }),
    );
    expect(invalid.status).toBe(400);
    expect(invalid.requestID).toBe(TRACE);

    const unknownKey = gatewayAnthropic(gateway, toOpenAI(), {
      'x-gateway-api-key': 'not-a-key',
      'x-gateway-trace-id': TRACE,
    });
    const denied = await failure<InstanceType<typeof Anthropic.APIError>>(
      unknownKey.messages.create(message),
    );
    expect(denied.status).toBe(401);
    expect(denied.requestID).toBe(TRACE);
  });

  it('gets the gateway trace id as request-id on its own errors under /v1/messages/ (the pass-through)', async () => {
    const unknownKey = gatewayAnthropic(gateway, toAnthropic(), {
      'x-gateway-api-key': 'not-a-key',
      'x-gateway-trace-id': TRACE,
    });
    const denied = await failure<InstanceType<typeof Anthropic.APIError>>(
      unknownKey.messages.batches.create({ requests: [{ custom_id: 'a', params: message }] }),
    );
    expect(denied.status).toBe(401);
    expect(denied.requestID).toBe(TRACE);

    const listed = await fetch(`${gateway.url}/messages/batches?limit=1`, {
      headers: { 'x-gateway-api-key': 'not-a-key', 'x-gateway-trace-id': TRACE },
    });
    expect(listed.status).toBe(401);
    expect(listed.headers.get('request-id')).toBe(TRACE);
    expect(listed.headers.get('x-request-id')).toBeNull();
  });
});
