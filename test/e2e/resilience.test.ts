/**
 * Resilience scenarios: the `openai` SDK (or fetch, to see the exact SSE) drives a real gateway on
 * loopback against fault-injecting fake upstreams. Each case starts its own fakes, so the cases run
 * concurrently against one gateway.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faults } from '../fakes/openai/server.js';
import { splitIntoPieces } from '../fakes/openai/request-text.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  client,
  logsOf,
  openAIFakesForFile,
  postChat,
  rawChatStream,
  target,
  traceHeaders,
  userMessage,
} from '../routing/support.js';
import { CONTINUE_INSTRUCTION } from '../../src/gateway/routing/continuation.js';
import { anthropicTextEvents } from '../fakes/anthropic/text-events.js';

let gateway: TestGateway;
const fake = openAIFakesForFile();

beforeAll(async () => {
  gateway = await startGateway();
});

const anthropicFakes: FakeAnthropic[] = [];

afterAll(async () => {
  await gateway?.close();
  await Promise.all(anthropicFakes.map((f) => f.close()));
});

/** An Anthropic Messages stream that says `text` in one delta per word. */
function anthropicStream(text: string): Array<Record<string, unknown>> {
  return anthropicTextEvents(text, { id: 'msg_fake', model: 'claude-fake', inputTokens: 30 });
}

const chat = { model: 'gpt-4o-mini', messages: userMessage('tell me a story') };

/** What the fake streams for `text` in `chunks` pieces, as one string, and its pieces. */
function fakeStream(name: string, chunks: number) {
  const pieces = splitIntoPieces(`[${name}] tell me a story`, chunks);
  return { pieces, whole: pieces.join('') };
}

describe.concurrent('retry on one target', () => {
  it('429 with Retry-After: 2 → the second call comes no sooner than 2 s later, then succeeds', async () => {
    const primary = await fake('primary');
    primary.enqueue({ status: 429, headers: { 'retry-after': '2' } });
    const config = target(primary, { retry: { attempts: 2, use_retry_after_headers: true } });
    const { data, response } = await client(gateway, config).chat.completions.create(chat).withResponse();
    expect(data.choices[0].message.content).toBe('[primary] tell me a story');
    expect(primary.requests).toHaveLength(2);
    expect(primary.requests[1].receivedAt - primary.requests[0].receivedAt).toBeGreaterThanOrEqual(2000);
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('1');
  });

  it('use_retry_after_header, as the reference gateway spells it, is use_retry_after_headers', async () => {
    const primary = await fake('primary');
    primary.enqueue({ status: 429, headers: { 'retry-after': '2' } });
    const config = target(primary, { retry: { attempts: 2, use_retry_after_header: true } });
    const { data } = await client(gateway, config).chat.completions.create(chat).withResponse();
    expect(data.choices[0].message.content).toBe('[primary] tell me a story');
    expect(primary.requests[1].receivedAt - primary.requests[0].receivedAt).toBeGreaterThanOrEqual(2000);

    // Both spellings saying different things is a mistake, not a choice between them.
    const both = target(primary, {
      retry: { attempts: 2, use_retry_after_headers: true, use_retry_after_header: false },
    });
    const error = await client(gateway, both)
      .chat.completions.create(chat)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, error: { param: 'config.retry.use_retry_after_header' } });
  });

  it('429 with Retry-After: 2 on a stream → same wait, then the stream answers', async () => {
    const primary = await fake('primary');
    primary.enqueue({ status: 429, headers: { 'retry-after': '2' } });
    const config = target(primary, { retry: { attempts: 1, use_retry_after_headers: true } });
    const stream = await client(gateway, config).chat.completions.create({ ...chat, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('[primary] tell me a story');
    expect(primary.requests[1].receivedAt - primary.requests[0].receivedAt).toBeGreaterThanOrEqual(2000);
  });

  it('500 once → retried on the same target, success', async () => {
    const primary = await fake('primary');
    primary.enqueue(faults.serverError());
    const config = target(primary, { retry: { attempts: 2 } });
    const { data, response } = await client(gateway, config).chat.completions.create(chat).withResponse();
    expect(data.choices[0].message.content).toBe('[primary] tell me a story');
    expect(primary.requests).toHaveLength(2);
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('1');
  });

  it('connection reset before headers → retried, success (streamed)', async () => {
    const primary = await fake('primary');
    primary.enqueue({ reset: true });
    const config = target(primary, { retry: { attempts: 1 } });
    const result = await rawChatStream(gateway, config, chat);
    expect(result.status).toBe(200);
    expect(result.text).toBe('[primary] tell me a story');
    expect(result.done).toBe(true);
    expect(primary.requests).toHaveLength(2);
  });

  it('a retry into the circuit the earlier calls opened is not made: the provider error, one retry counted', async () => {
    const primary = await fake('primary', { defaultBehaviour: { status: 502 } });
    const config = target(primary, {
      retry: { attempts: 3 },
      cb_config: { failure_threshold: 2, cooldown_interval: 30_000 },
    });
    const { traceId, headers } = traceHeaders();
    const response = await postChat(gateway, config, chat, headers);
    expect(response.status).toBe(502);
    expect(response.headers.get('x-gateway-error-source')).toBe('provider');
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('1');
    expect(primary.requests).toHaveLength(2);
    const records = await logsOf(gateway, traceId, 4);
    expect(records.find((r) => !r.is_attempt)).toMatchObject({ status: 502 });
    expect(records.filter((r) => r.is_attempt).map((r) => r.error_code)).toContain('circuit_open');
  });

  it("a cb_config inside strategy, where the reference gateway puts it, is the node's cb_config", async () => {
    const primary = await fake('primary', { defaultBehaviour: { status: 502 } });
    const backup = await fake('backup');
    const breaker = { failure_threshold: 1, cooldown_interval: 30_000 };
    const config = {
      strategy: { mode: 'fallback', on_status_codes: [502], cb_config: breaker },
      targets: [target(primary), target(backup)],
    };
    for (let i = 0; i < 2; i++) {
      const answer = await client(gateway, config).chat.completions.create(chat);
      expect(answer.choices[0].message.content).toBe('[backup] tell me a story');
    }
    // The first failure opened primary's circuit: the second request went to the backup alone.
    expect(primary.requests).toHaveLength(1);
    expect(backup.requests).toHaveLength(2);

    const both = { ...config, cb_config: breaker };
    const error = await client(gateway, both)
      .chat.completions.create(chat)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, error: { param: 'config.strategy.cb_config' } });
  });

  it('without a retry config a failure is not retried', async () => {
    const primary = await fake('primary', { defaultBehaviour: { status: 503 } });
    const error = await client(gateway, target(primary))
      .chat.completions.create(chat)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect(primary.requests).toHaveLength(1);
  });

  it('400 context_length_exceeded → exactly one call, the provider error returned as it came', async () => {
    const primary = await fake('primary');
    const fallback = await fake('fallback');
    primary.enqueue(faults.contextLengthExceeded());
    const config = {
      strategy: { mode: 'fallback', on_status_codes: [429, 500, 502, 503, 504] },
      retry: { attempts: 3 },
      targets: [target(primary), target(fallback)],
    };
    const error = await client(gateway, config)
      .chat.completions.create(chat)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('context_length_exceeded');
    expect(primary.requests).toHaveLength(1);
    expect(fallback.requests).toHaveLength(0);
  });

  it('content-policy 400 on a stream → exactly one call, a plain 400 before any byte', async () => {
    const primary = await fake('primary');
    primary.enqueue(faults.contentPolicy());
    const config = target(primary, { retry: { attempts: 3 } });
    const result = await rawChatStream(gateway, config, chat);
    expect(result.status).toBe(400);
    expect(primary.requests).toHaveLength(1);
  });
});

describe.concurrent('fallback after retries', () => {
  it('429 forever without Retry-After → a few spaced calls, then the fallback answers with its model and usage', async () => {
    const primary = await fake('primary', { defaultBehaviour: { status: 429 } });
    const fallback = await fake('fallback');
    const config = {
      strategy: { mode: 'fallback' },
      retry: { attempts: 3 },
      targets: [target(primary), target(fallback, { override_params: { model: 'fallback-model' } })],
    };
    const { traceId, headers } = traceHeaders();
    const { data, response } = await client(gateway, config, headers)
      .chat.completions.create(chat)
      .withResponse();
    expect(data.choices[0].message.content).toBe('[fallback] tell me a story');
    expect(data.model).toBe('fallback-model');
    expect(primary.requests).toHaveLength(4);
    const times = primary.requests.map((r) => r.receivedAt);
    // Full jitter: each wait is random in [0, 250·2ⁿ) ms; three of them together are not nothing.
    expect(times[3] - times[0]).toBeGreaterThan(20);
    expect(times[3] - times[0]).toBeLessThan(250 + 500 + 1000 + 500);
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('3');
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('targets[1]');
    expect(response.headers.get('x-gateway-provider')).toBe('openai');

    const records = await logsOf(gateway, traceId, 6);
    const attempts = records.filter((r) => r.is_attempt);
    expect(attempts.map((r) => [r.target, r.status])).toEqual([
      ['targets[0]', 429],
      ['targets[0]', 429],
      ['targets[0]', 429],
      ['targets[0]', 429],
      ['targets[1]', 200],
    ]);
    expect(attempts.slice(0, 4).every((r) => r.total_tokens === null && r.error_code !== null)).toBe(true);
    const request = records.find((r) => !r.is_attempt);
    expect(request?.model).toBe('fallback-model');
    expect(request?.total_tokens).toBe(data.usage?.total_tokens);
    expect(request?.total_tokens).toBe(attempts[4].total_tokens);
  });

  it('503 forever → bounded calls, then the fallback answers (streamed)', async () => {
    const primary = await fake('primary', { defaultBehaviour: faults.overloaded() });
    const fallback = await fake('fallback');
    const config = {
      strategy: { mode: 'fallback' },
      targets: [target(primary, { retry: { attempts: 2 } }), target(fallback)],
    };
    const result = await rawChatStream(gateway, config, { ...chat, stream_options: { include_usage: true } });
    expect(result.text).toBe('[fallback] tell me a story');
    expect(result.done).toBe(true);
    expect(primary.requests).toHaveLength(3);
    expect(result.headers.get('x-gateway-last-used-option-index')).toBe('targets[1]');
    expect(result.headers.get('x-gateway-retry-attempt-count')).toBe('2');
  });

  it('503 forever without a fallback → a clean error carrying the provider reason', async () => {
    const primary = await fake('primary', { defaultBehaviour: faults.overloaded() });
    const config = target(primary, { retry: { attempts: 2 } });
    const error = await client(gateway, config)
      .chat.completions.create(chat)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    const apiError = error as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(503);
    expect(apiError.message).toContain('The engine is currently overloaded');
    expect(apiError.headers?.get('x-gateway-error-source')).toBe('provider');
    expect(primary.requests).toHaveLength(3);
  });

  it('a Retry-After longer than the request deadline moves on to the fallback at once', async () => {
    const tight = await startGateway({ env: { GATEWAY_REQUEST_TIMEOUT_MS: '5000' } });
    try {
      const primary = await fake('primary');
      const fallback = await fake('fallback');
      primary.enqueue({ status: 429, headers: { 'retry-after': '30' } });
      const config = {
        strategy: { mode: 'fallback' },
        targets: [
          target(primary, { retry: { attempts: 3, use_retry_after_headers: true } }),
          target(fallback),
        ],
      };
      const started = Date.now();
      const answer = await client(tight, config).chat.completions.create(chat);
      expect(answer.choices[0].message.content).toBe('[fallback] tell me a story');
      expect(Date.now() - started).toBeLessThan(2000);
      expect(primary.requests).toHaveLength(1);
    } finally {
      await tight.close();
    }
  });
});

describe('the request deadline', () => {
  it('names the last target tried when the deadline passes before the next one is called', async () => {
    const tight = await startGateway({ env: { GATEWAY_REQUEST_TIMEOUT_MS: '600' } });
    try {
      const slow = await fake('slow', { defaultBehaviour: { hang: true } });
      const never = await fake('never');
      const config = {
        strategy: { mode: 'fallback' },
        request_timeout: 300,
        targets: [target(slow), target(slow), target(never)],
      };
      const { traceId, headers } = traceHeaders();
      const error = await client(tight, config, headers)
        .chat.completions.create(chat)
        .catch((e: unknown) => e);
      const apiError = error as InstanceType<typeof OpenAI.APIError>;
      expect(apiError.status).toBe(408);
      expect(never.requests).toHaveLength(0);
      expect(apiError.headers?.get('x-gateway-last-used-option-index')).toBe('targets[1]');
      const records = await logsOf(tight, traceId, 3);
      expect(records.find((r) => !r.is_attempt)).toMatchObject({ target: 'targets[1]', status: 408 });
      expect(records.filter((r) => r.is_attempt).map((r) => r.target)).toEqual(['targets[0]', 'targets[1]']);
    } finally {
      await tight.close();
    }
  });

  it('says how long it waited in whole milliseconds when what was left of it ended the call', async () => {
    const tight = await startGateway({ env: { GATEWAY_REQUEST_TIMEOUT_MS: '400' } });
    try {
      const slow = await fake('slow', { defaultBehaviour: { hang: true } });
      const error = await client(tight, target(slow))
        .chat.completions.create(chat)
        .catch((e: unknown) => e);
      const apiError = error as InstanceType<typeof OpenAI.APIError>;
      expect(apiError.status).toBe(408);
      expect(apiError.message).toMatch(/did not answer within \d+ ms \(first byte\)$/);
    } finally {
      await tight.close();
    }
  });

  it("bounds a stream whose head came but no chunk: 408 at the request's deadline, not the idle one", async () => {
    const tight = await startGateway({ env: { GATEWAY_REQUEST_TIMEOUT_MS: '1500' } });
    try {
      const silent = await fake('silent');
      silent.enqueue({ stallAfter: 0 });
      const started = Date.now();
      const result = await rawChatStream(tight, target(silent), chat);
      expect(result.status).toBe(408);
      expect(Date.now() - started).toBeLessThan(4000);
    } finally {
      await tight.close();
    }
  });
});

describe.concurrent('deadlines', () => {
  it('no response at all → the attempt ends at request_timeout and the fallback answers', async () => {
    const primary = await fake('primary', { defaultBehaviour: { hang: true } });
    const fallback = await fake('fallback');
    const config = {
      strategy: { mode: 'fallback' },
      targets: [target(primary, { request_timeout: 1000 }), target(fallback)],
    };
    const { traceId, headers } = traceHeaders();
    const started = Date.now();
    const answer = await client(gateway, config, headers).chat.completions.create(chat);
    const elapsed = Date.now() - started;
    expect(answer.choices[0].message.content).toBe('[fallback] tell me a story');
    expect(elapsed).toBeGreaterThanOrEqual(1000);
    expect(elapsed).toBeLessThan(2500);
    const attempts = (await logsOf(gateway, traceId, 3)).filter((r) => r.is_attempt);
    expect(attempts[0]).toMatchObject({ target: 'targets[0]', status: 408, error_code: 'request_timeout' });
  });

  it('no response and nothing left → 408', async () => {
    const primary = await fake('primary', { defaultBehaviour: { hang: true } });
    const error = await client(gateway, target(primary, { request_timeout: 500 }))
      .chat.completions.create(chat)
      .catch((e: unknown) => e);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(408);
  });

  it('keep-alive comments but never a chunk → cut at request_timeout, the fallback answers', async () => {
    const primary = await fake('primary', { defaultBehaviour: { stallAfter: 0, keepAliveMs: 100 } });
    const fallback = await fake('fallback');
    const config = {
      strategy: { mode: 'fallback' },
      request_timeout: 1000,
      targets: [target(primary), target(fallback)],
    };
    const result = await rawChatStream(gateway, config, chat);
    expect(result.text).toBe('[fallback] tell me a story');
    expect(result.elapsedMs).toBeLessThan(3000);
  });

  it('a request_timeout past 2^31 ms (longer than a Node timer holds) does not cut a healthy stream', async () => {
    const up = await fake('up', { defaultBehaviour: { chunkDelayMs: 20 } });
    const result = await rawChatStream(gateway, target(up, { request_timeout: 2 ** 31 }), chat);
    expect(result.text).toBe('[up] tell me a story');
    expect(result.done).toBe(true);
  });

  it('first token 20 s late with a 3 s first-byte deadline → the fallback answers', async () => {
    const primary = await fake('primary', { defaultBehaviour: { firstByteDelayMs: 20_000 } });
    const fallback = await fake('fallback');
    const config = {
      strategy: { mode: 'fallback' },
      request_timeout: 3000,
      targets: [target(primary), target(fallback)],
    };
    const started = Date.now();
    const result = await rawChatStream(gateway, config, chat);
    expect(result.text).toBe('[fallback] tell me a story');
    expect(result.done).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe.concurrent('unbroken streams', () => {
  it('cut after 40 of 60 chunks → the fallback continues it; the client gets the whole text once, then [DONE]', async () => {
    const primary = await fake('primary');
    const fallback = await fake('fallback');
    const { pieces, whole } = fakeStream('primary', 60);
    // The stream's first event is the role chunk, so 40 events carry 39 pieces of text.
    const sent = pieces.slice(0, 39).join('');
    const rest = pieces.slice(39).join('');
    primary.enqueue({ chunks: 60, cutAfter: 40 });
    fallback.enqueue({ text: rest });
    const config = {
      strategy: { mode: 'fallback' },
      targets: [target(primary), target(fallback, { override_params: { model: 'fallback-model' } })],
    };
    const { traceId, headers } = traceHeaders();
    const result = await rawChatStream(
      gateway,
      config,
      { ...chat, stream_options: { include_usage: true } },
      headers,
    );
    expect(result.text).toBe(whole);
    expect(result.done).toBe(true);
    const chunks = result.events.filter((e) => e !== '[DONE]') as OpenAI.ChatCompletionChunk[];
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.choices.every((choice) => choice.index === 0))).toBe(true);
    expect(chunks.filter((c) => c.choices[0]?.delta?.role !== undefined)).toHaveLength(1);
    expect(chunks.filter((c) => c.choices[0]?.finish_reason === 'stop')).toHaveLength(1);
    // After the cut the chunks are the answering target's: its model and its usage.
    expect(chunks.at(-2)?.model).toBe('fallback-model');
    const usage = chunks.at(-1)?.usage;
    expect(usage?.completion_tokens).toBe(splitIntoPieces(rest).length);

    const continued = fallback.requests[0].body as { messages: { role: string; content: string }[] };
    expect(continued.messages.slice(-2)).toEqual([
      { role: 'assistant', content: sent },
      { role: 'user', content: CONTINUE_INSTRUCTION },
    ]);
    const records = await logsOf(gateway, traceId, 3);
    const attempts = records.filter((r) => r.is_attempt);
    expect(attempts.map((r) => r.target)).toEqual(['targets[0]', 'targets[1]']);
    expect(attempts[0].status).toBeGreaterThanOrEqual(500);
    expect(attempts[0].total_tokens).toBeNull();
    expect(records.find((r) => !r.is_attempt)).toMatchObject({ status: 200, target: 'targets[1]' });
  });

  it('with guardrails, input checks judge the client’s request, not its continuation; output checks the whole answer', async () => {
    const primary = await fake('primary');
    const fallback = await fake('fallback');
    const { pieces, whole } = fakeStream('primary', 60);
    primary.enqueue({ chunks: 60, cutAfter: 40 });
    fallback.enqueue({ text: pieces.slice(39).join('') });
    const config = {
      strategy: { mode: 'fallback' },
      input_guardrails: [{ id: 'asks', deny: true, 'default.regexMatch': { rule: 'tell me a story' } }],
      // The first words went out before the cut, the last came from the fallback.
      output_guardrails: [{ id: 'whole', 'default.contains': { words: ['story', ' 60'], operator: 'all' } }],
      targets: [target(primary), target(fallback)],
    };
    const { traceId, headers } = traceHeaders();
    const result = await rawChatStream(gateway, config, chat, headers);
    expect(result.text).toBe(whole);
    expect(result.done).toBe(true);
    expect(fallback.requests).toHaveLength(1);
    const records = await logsOf(gateway, traceId, 3);
    const request = records.find((r) => !r.is_attempt);
    expect(request?.status).toBe(200);
    expect(request?.hook_results).toMatchObject({
      before_request_hooks: [{ id: 'asks', verdict: true }],
      after_request_hooks: [{ id: 'whole', verdict: true }],
    });
  });

  it('a fallback that redacts its continuation rewrites only the rest, after what the client has', async () => {
    const primary = await fake('primary');
    const fallback = await fake('fallback');
    const { pieces } = fakeStream('primary', 60);
    const sent = pieces.slice(0, 39).join('');
    primary.enqueue({ chunks: 60, cutAfter: 40 });
    fallback.enqueue({ text: ' and write to jane.doe@example.com' });
    const redact = { id: 'pii', 'default.pii': { categories: ['email'], redact: true } };
    const config = {
      strategy: { mode: 'fallback' },
      targets: [target(primary), target(fallback, { output_guardrails: [redact] })],
    };
    const result = await rawChatStream(gateway, config, chat);
    expect(result.done).toBe(true);
    expect(result.text).toBe(`${sent} and write to [EMAIL_1]`);
  });

  it('cut after 40 of 60 chunks with no fallback → an in-band error and no [DONE], never a truncated success', async () => {
    const primary = await fake('primary');
    primary.enqueue({ chunks: 60, cutAfter: 40 });
    const result = await rawChatStream(gateway, target(primary, { retry: { attempts: 3 } }), chat);
    expect(result.status).toBe(200);
    expect(result.done).toBe(false);
    expect(result.events.at(-1)).toMatchObject({ error: { message: expect.any(String) } });
    expect(primary.requests).toHaveLength(1);

    primary.enqueue({ chunks: 60, cutAfter: 40 });
    const stream = await client(gateway, target(primary)).chat.completions.create({ ...chat, stream: true });
    const read = async () => {
      for await (const _chunk of stream) void _chunk;
    };
    await expect(read()).rejects.toBeInstanceOf(OpenAI.APIError);
  });

  it('cut mid-stream → an Anthropic fallback continues from an assistant prefill', async () => {
    const primary = await fake('primary');
    const claude = await startFakeAnthropic({ apiKey: 'sk-ant-test' });
    anthropicFakes.push(claude);
    const { pieces, whole } = fakeStream('primary', 20);
    // 11 events: the role chunk and 10 pieces of text.
    const sent = pieces.slice(0, 10).join('');
    primary.enqueue({ chunks: 20, cutAfter: 11 });
    claude.enqueue({ kind: 'stream', events: anthropicStream(pieces.slice(10).join('')) });
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        target(primary),
        {
          provider: 'anthropic',
          api_key: 'sk-ant-test',
          custom_host: claude.url,
          override_params: { model: 'claude-fake', max_tokens: 256 },
        },
      ],
    };
    const result = await rawChatStream(gateway, config, { ...chat, stream_options: { include_usage: true } });
    expect(result.text).toBe(whole);
    expect(result.done).toBe(true);
    const messages = claude.requests[0].body.messages as { role: string; content: unknown }[];
    const last = messages.at(-1) as { role: string; content: unknown };
    expect(last.role).toBe('assistant');
    expect(JSON.stringify(last.content)).toContain(sent.trimEnd().slice(-10));
    expect(JSON.stringify(messages)).not.toContain('Continue it exactly');
    const chunks = result.events.filter((e) => e !== '[DONE]') as OpenAI.ChatCompletionChunk[];
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.at(-1)?.usage?.completion_tokens).toBe(10);
  });

  it('stalls after 20 chunks → detected within the idle deadline, continued on the fallback', async () => {
    const primary = await fake('primary');
    const fallback = await fake('fallback');
    const { pieces, whole } = fakeStream('primary', 60);
    primary.enqueue({ chunks: 60, stallAfter: 20 });
    fallback.enqueue({ text: pieces.slice(19).join('') });
    const config = {
      strategy: { mode: 'fallback' },
      targets: [target(primary, { request_timeout: 1000 }), target(fallback)],
    };
    const result = await rawChatStream(gateway, config, chat);
    expect(result.text).toBe(whole);
    expect(result.done).toBe(true);
    expect(result.elapsedMs).toBeGreaterThanOrEqual(1000);
    expect(result.elapsedMs).toBeLessThan(2500);
  });

  it('an error event mid-stream → continued on the fallback', async () => {
    const primary = await fake('primary');
    const fallback = await fake('fallback');
    const { pieces, whole } = fakeStream('primary', 30);
    primary.enqueue({ chunks: 30, errorEventAfter: 11 });
    fallback.enqueue({ text: pieces.slice(10).join('') });
    const config = { strategy: { mode: 'fallback' }, targets: [target(primary), target(fallback)] };
    const result = await rawChatStream(gateway, config, chat);
    expect(result.text).toBe(whole);
    expect(result.done).toBe(true);
  });

  it('a malformed chunk mid-stream → skipped and recorded; the answer completes; the gateway stays healthy', async () => {
    const primary = await fake('primary');
    primary.enqueue({ chunks: 10, malformedAt: 5 });
    const { traceId, headers } = traceHeaders();
    const result = await rawChatStream(gateway, target(primary), chat, headers);
    expect(result.text).toBe(fakeStream('primary', 10).whole);
    expect(result.done).toBe(true);
    // One call answered: the request's own record says what was skipped.
    const records = await logsOf(gateway, traceId, 1);
    expect(records.map((r) => r.is_attempt)).toEqual([false]);
    expect(records[0]).toMatchObject({
      status: 200,
      error_code: 'malformed_chunks_skipped',
      error_message: '1 malformed stream chunk(s) skipped',
    });
    const again = await client(gateway, target(primary)).chat.completions.create(chat);
    expect(again.choices[0].message.content).toBe('[primary] tell me a story');
  });

  it('a stream that ends without [DONE] → finalised at once, with usage', async () => {
    const primary = await fake('primary');
    primary.enqueue({ noDone: true });
    const result = await rawChatStream(gateway, target(primary), {
      ...chat,
      stream_options: { include_usage: true },
    });
    expect(result.done).toBe(true);
    expect(result.elapsedMs).toBeLessThan(1000);
    expect(result.events.at(-2)).toMatchObject({ usage: { total_tokens: expect.any(Number) } });
  });

  it('a finished stream held open without [DONE] → finalised within a second', async () => {
    const primary = await fake('primary');
    // 1 role + 5 words + the finish chunk, then silence with the socket open (no usage, no [DONE]).
    primary.enqueue({ noDone: true, stallAfter: 7 });
    const result = await rawChatStream(gateway, target(primary), {
      ...chat,
      stream_options: { include_usage: true },
    });
    expect(result.text).toBe('[primary] tell me a story');
    expect(result.done).toBe(true);
    expect(result.elapsedMs).toBeLessThan(1500);
  });
});
