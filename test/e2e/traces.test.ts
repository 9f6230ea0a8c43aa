/**
 * Traces end to end: a real gateway exporting over OTLP/HTTP to an in-process receiver, calls made with the
 * `openai` SDK. Each call's spans arrive with the GenAI attributes, under the parent a client's
 * `traceparent` named, with the same ids as the call's log records and the `traceparent` it returned.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../fakes/otlp/receiver.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, logsOf, target, userMessage } from '../routing/support.js';

const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;
const ERROR = 2;

let gateway: TestGateway;
let fake: FakeUpstream;
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  fake = await startFakeOpenAI({ name: 'traced' });
  gateway = await startGateway({
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=secret%20key',
      OTEL_SERVICE_NAME: 'gateway-under-test',
      OTEL_BSP_SCHEDULE_DELAY: '20',
    },
  });
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
  await receiver?.close();
});

function newTraceparent(): { traceparent: string; traceId: string; parentId: string } {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { traceparent: `00-${traceId}-${parentId}-01`, traceId, parentId };
}

async function spansOf(traceId: string, count: number): Promise<ReceivedSpan[]> {
  const all = await receiver.waitFor(
    (spans) => spans.filter((span) => span.traceId === traceId).length >= count,
  );
  return all.filter((span) => span.traceId === traceId);
}

const uuidOf = (hex: string) =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

describe('traces', () => {
  it('writes a request span and a CLIENT span per call, under the parent from traceparent', async () => {
    const { traceparent, traceId, parentId } = newTraceparent();
    const { data, response } = await client(gateway, target(fake), { traceparent })
      .chat.completions.create({
        model: 'gpt-4o-mini',
        messages: userMessage('trace me'),
        max_tokens: 50,
        temperature: 0.2,
      })
      .withResponse();
    // The trace is the client's; its id in the gateway's own header is the same trace as a UUID.
    expect(response.headers.get('x-gateway-trace-id')).toBe(uuidOf(traceId));
    const returned = response.headers.get('traceparent')!;
    expect(returned).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    const requestSpanId = returned.split('-')[2];

    const spans = await spansOf(traceId, 2);
    const request = spans.find((span) => span.kind === SERVER)!;
    expect(request).toMatchObject({
      spanId: requestSpanId,
      parentSpanId: parentId,
      name: 'chat gpt-4o-mini',
    });
    expect(request.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': data.model,
      'gen_ai.request.max_tokens': 50,
      'gen_ai.request.temperature': 0.2,
      'gen_ai.usage.input_tokens': data.usage!.prompt_tokens,
      'gen_ai.usage.output_tokens': data.usage!.completion_tokens,
      'http.response.status_code': 200,
      'gateway.trace_id': uuidOf(traceId),
    });
    expect(request.attributes['gateway.cost_usd']).toBeGreaterThan(0);
    expect(request.resource['service.name']).toBe('gateway-under-test');
    const call = spans.find((span) => span.kind === CLIENT)!;
    expect(call).toMatchObject({ parentSpanId: requestSpanId, name: 'chat gpt-4o-mini' });
    // Sampled; the request span's parent is the client's (remote), the call's is the gateway's own.
    expect(request.flags).toBe(0x301);
    expect(call.flags).toBe(0x101);
    expect(call.attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'gateway.retry': 0 });
    // The call happened within the request.
    expect(call.startNs >= request.startNs && call.endNs <= request.endNs).toBe(true);
    expect(receiver.exports.at(-1)?.['x-collector-key']).toBe('secret key');
    // OTLP's default encoding.
    expect(receiver.exports.at(-1)?.['content-type']).toBe('application/x-protobuf');

    const [record] = await logsOf(gateway, uuidOf(traceId), 1);
    expect(record.span_id).toBe(requestSpanId);
    expect(record.parent_span_id).toBe(parentId);
  });

  it('marks retries and fallbacks, with the ids of the attempts’ log records', async () => {
    const { traceparent, traceId } = newTraceparent();
    const failing = target(fake, { override_params: { model: 'fake-status-503' } });
    await client(
      gateway,
      {
        strategy: { mode: 'fallback' },
        targets: [{ ...failing, retry: { attempts: 1, on_status_codes: [503] } }, target(fake)],
      },
      { traceparent },
    ).chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('fall back') });

    const spans = await spansOf(traceId, 4);
    const calls = spans.filter((span) => span.kind === CLIENT).sort((a, b) => Number(a.startNs - b.startNs));
    expect(
      calls.map((span) => [
        span.attributes['gateway.target'],
        span.attributes['gateway.retry'],
        span.attributes['gateway.fallback'],
        span.statusCode,
      ]),
    ).toEqual([
      ['targets[0]', 0, false, ERROR],
      ['targets[0]', 1, false, ERROR],
      ['targets[1]', 0, true, 0],
    ]);
    expect(calls[0].attributes['http.response.status_code']).toBe(503);
    const request = spans.find((span) => span.kind === SERVER)!;
    expect(request.statusCode).toBe(0);
    expect(request.attributes['gateway.retry_count']).toBe(1);

    const attempts = (await logsOf(gateway, uuidOf(traceId), 4)).filter((record) => record.is_attempt);
    expect(new Set(attempts.map((record) => record.span_id))).toEqual(
      new Set(calls.map((span) => span.spanId)),
    );
  });

  it('writes a cache answer and each hook as INTERNAL spans; a failed request as an error', async () => {
    const config = target(fake, {
      cache: { mode: 'simple' },
      input_guardrails: [{ id: 'short-enough', 'default.characterCount': { maxCharacters: 1000 } }],
    });
    const body = { model: 'gpt-4o-mini', messages: userMessage('cache and guard me') };
    await client(gateway, config).chat.completions.create(body);
    const { traceparent, traceId } = newTraceparent();
    await client(gateway, config, { traceparent }).chat.completions.create(body);
    const spans = await spansOf(traceId, 3);
    expect(spans.find((span) => span.name === 'cache hit')?.kind).toBe(INTERNAL);
    const hook = spans.find((span) => span.name === 'hook short-enough')!;
    expect(hook.kind).toBe(INTERNAL);
    expect(hook.attributes).toMatchObject({
      'gateway.hook.event': 'beforeRequestHook',
      'gateway.hook.verdict': true,
      'gateway.hook.checks': ['default.characterCount'],
    });

    const failed = newTraceparent();
    await expect(
      client(gateway, target(fake, { override_params: { model: 'fake-status-400' } }), {
        traceparent: failed.traceparent,
      }).chat.completions.create(body),
    ).rejects.toMatchObject({ status: 400 });
    const [request] = (await spansOf(failed.traceId, 2)).filter((span) => span.kind === SERVER);
    expect(request.statusCode).toBe(ERROR);
    expect(request.attributes['error.type']).toBeDefined();
  });

  it('writes no CLIENT span for a call a denying hook refused before any provider was called', async () => {
    const { traceparent, traceId } = newTraceparent();
    const config = target(fake, {
      input_guardrails: [
        { id: 'no-pw', deny: true, 'default.contains': { words: ['password'], operator: 'none' } },
      ],
    });
    const before = fake.requests.length;
    await expect(
      client(gateway, config, { traceparent }).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: userMessage('my password is hunter2'),
      }),
    ).rejects.toMatchObject({ status: 446 });
    expect(fake.requests.length).toBe(before);
    const spans = await spansOf(traceId, 3);
    expect(spans.filter((span) => span.kind === CLIENT)).toEqual([]);
    const refused = spans.find((span) => span.name === 'hooks denied')!;
    expect(refused).toMatchObject({ kind: INTERNAL, statusCode: ERROR });
    expect(refused.attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'gateway.retry': 0 });
    expect(spans.find((span) => span.name === 'hook no-pw')?.attributes['gateway.hook.deny']).toBe(true);
  });

  it('places an after-request hook after the call, and returns the traceparent of a stream', async () => {
    const { traceparent, traceId } = newTraceparent();
    const config = target(fake, {
      output_guardrails: [{ id: 'long-enough', 'default.characterCount': { minCharacters: 1 } }],
    });
    const { data: stream, response } = await client(gateway, config, { traceparent })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('stream me'), stream: true })
      .withResponse();
    for await (const chunk of stream) void chunk;
    const requestSpanId = response.headers.get('traceparent')!.split('-')[2];
    const spans = await spansOf(traceId, 3);
    const request = spans.find((span) => span.kind === SERVER)!;
    expect(request.spanId).toBe(requestSpanId);
    expect(request.attributes['gateway.stream']).toBe(true);
    const call = spans.find((span) => span.kind === CLIENT)!;
    const hook = spans.find((span) => span.name === 'hook long-enough')!;
    expect(hook).toMatchObject({ kind: INTERNAL, parentSpanId: requestSpanId });
    expect(hook.attributes['gateway.hook.event']).toBe('afterRequestHook');
    expect(hook.startNs >= call.endNs).toBe(true);
  });

  it('maps a trace id of the client’s own choosing to one OpenTelemetry trace id', async () => {
    const mine = `order-${randomBytes(4).toString('hex')}`;
    const { response } = await client(gateway, target(fake), { 'x-gateway-trace-id': mine })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('my own trace id') })
      .withResponse();
    expect(response.headers.get('x-gateway-trace-id')).toBe(mine);
    const traceId = response.headers.get('traceparent')!.split('-')[1];
    const [request] = (await spansOf(traceId, 2)).filter((span) => span.kind === SERVER);
    expect(request.attributes['gateway.trace_id']).toBe(mine);
  });

  it('writes at most 256 characters of a model name in span names and attributes', async () => {
    const { traceparent, traceId } = newTraceparent();
    // A caller's made-up model of 200 KB in every span of the call would swell its export batch, shared with
    // 255 other calls, past what collectors take (and be refused with them).
    const model = `made-up-${'x'.repeat(200_000)}`;
    await client(gateway, target(fake), { traceparent }).chat.completions.create({
      model,
      messages: userMessage('long name'),
    });
    const spans = await spansOf(traceId, 2);
    for (const span of spans) {
      expect(span.name.length).toBeLessThanOrEqual(300);
      for (const name of ['gen_ai.request.model', 'gen_ai.response.model']) {
        const value = span.attributes[name];
        if (value !== undefined) expect(value).toBe(model.slice(0, 256));
      }
    }
    expect(spans.find((span) => span.kind === SERVER)?.name).toBe(`chat ${model.slice(0, 256)}`);
  });

  it('takes the span, its parent and its name from the gateway’s own headers, over traceparent', async () => {
    const { traceparent, traceId } = newTraceparent();
    const spanId = randomBytes(8).toString('hex');
    const parentId = randomBytes(8).toString('hex');
    const { response } = await client(gateway, target(fake), {
      traceparent,
      'x-gateway-span-id': spanId,
      'x-gateway-parent-span-id': parentId,
      'x-gateway-span-name': 'summarise step',
    })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('named span') })
      .withResponse();
    // The trace is still traceparent's; the span and its parent are the headers'.
    expect(response.headers.get('traceparent')).toBe(`00-${traceId}-${spanId}-01`);
    const spans = await spansOf(traceId, 2);
    const request = spans.find((span) => span.kind === SERVER)!;
    expect(request).toMatchObject({ spanId, parentSpanId: parentId, name: 'summarise step' });
    expect(request.flags).toBe(0x301);
    expect(spans.find((span) => span.kind === CLIENT)?.parentSpanId).toBe(spanId);

    // x-gateway-trace-id names the trace: traceparent, and the parent it names, are not read at all.
    const other = newTraceparent();
    const { response: named } = await client(gateway, target(fake), {
      traceparent: other.traceparent,
      'x-gateway-trace-id': uuidOf(traceId),
    })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('own trace') })
      .withResponse();
    const returned = named.headers.get('traceparent')!;
    expect(returned.split('-')[1]).toBe(traceId);
    const [second] = (await spansOf(traceId, 4)).filter(
      (span) => span.kind === SERVER && span.spanId === returned.split('-')[2],
    );
    expect(second.parentSpanId).toBeUndefined();
    expect(second.flags).toBe(0x101);
  });

  it('names a Responses call `chat`, with its max_output_tokens', async () => {
    const { traceparent, traceId } = newTraceparent();
    await client(gateway, target(fake), { traceparent }).responses.create({
      model: 'gpt-4o-mini',
      input: 'respond',
      max_output_tokens: 40,
    });
    const spans = await spansOf(traceId, 2);
    const request = spans.find((span) => span.kind === SERVER)!;
    expect(request.name).toBe('chat gpt-4o-mini');
    expect(request.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.max_tokens': 40,
    });
    expect(spans.find((span) => span.kind === CLIENT)?.name).toBe('chat gpt-4o-mini');
  });

  it('ignores an invalid traceparent', async () => {
    const { response } = await client(gateway, target(fake), { traceparent: '00-nope-01' })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('bad parent') })
      .withResponse();
    expect(response.headers.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  });

  it('counts the calls it exported in gateway_trace_calls_total', async () => {
    const exported = async () => {
      const text = await (await fetch(`${gateway.origin}/metrics`)).text();
      return Number(/^gateway_trace_calls_total\{outcome="exported"\} (\S+)$/m.exec(text)?.[1] ?? NaN);
    };
    const before = await exported();
    expect(before).toBeGreaterThanOrEqual(0);
    const { traceId } = newTraceparent();
    await client(gateway, target(fake), {
      traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
    }).chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('counted') });
    await spansOf(traceId, 2);
    // The count moves once the collector has answered the export, just after it received the spans.
    await expect.poll(exported, { timeout: 5_000 }).toBeGreaterThan(before);
  });
});
