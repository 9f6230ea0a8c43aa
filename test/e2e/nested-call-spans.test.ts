/**
 * The calls the gateway makes through its own routing for a call it serves — a guardrail's model judge,
 * the semantic cache's embedding — are traced inside that call: the judge's span under the span of the
 * hook that asked it, the embedding's under the request's, each an INTERNAL span (its provider call a
 * CLIENT span under it), so the trace has one root in the gateway, the request's. Their log records stay
 * calls of their own: no `parent_span_id`, which names the request a record is an attempt of. A real
 * gateway exporting over OTLP/HTTP to an in-process receiver, calls made with the `openai` SDK.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../fakes/otlp/receiver.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client as managementClient } from '../management/http.js';
import { client, logsOf, target, userMessage } from '../routing/support.js';

const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;

let gateway: TestGateway;
let fake: FakeUpstream;
let judge: FakeUpstream;
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  [fake, judge] = await Promise.all([
    startFakeOpenAI({ name: 'nested' }),
    startFakeOpenAI({ name: 'nested-judge' }),
  ]);
  gateway = await startGateway({
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '20' },
  });
  const admin = managementClient(gateway.url, gateway.adminKey);
  const judgeConfig = { ...target(judge), override_params: { model: 'judge-model' } };
  expect((await admin.post('/configs', { slug: 'nested-judge', config: judgeConfig })).status).toBe(200);
  const embedder = await admin.post('/virtual-keys', {
    slug: 'nested-embedder',
    name: 'nested-embedder',
    provider: 'openai',
    api_key: 'sk-embedder',
    custom_host: fake.url,
  });
  expect(embedder.status).toBe(200);
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([fake?.close(), judge?.close(), receiver?.close()]);
});

function newTraceparent(): { traceparent: string; traceId: string; parentId: string } {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { traceparent: `00-${traceId}-${parentId}-01`, traceId, parentId };
}

const uuidOf = (hex: string) =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

async function spansOf(traceId: string, count: number): Promise<ReceivedSpan[]> {
  const all = await receiver.waitFor(
    (spans) => spans.filter((span) => span.traceId === traceId).length >= count,
  );
  return all.filter((span) => span.traceId === traceId);
}

/** The one span of `spans` that matches, failing when there is not exactly one. */
function only(spans: ReceivedSpan[], match: (span: ReceivedSpan) => boolean): ReceivedSpan {
  const found = spans.filter(match);
  expect(found, JSON.stringify(spans.map((span) => [span.name, span.kind, span.parentSpanId]))).toHaveLength(
    1,
  );
  return found[0];
}

describe('a call made through the gateway for a call it serves', () => {
  it.each(['input_guardrails', 'output_guardrails'])(
    "traces a model judge of %s under its hook's span",
    async (list) => {
      const { traceparent, traceId, parentId } = newTraceparent();
      const config = {
        ...target(fake),
        [list]: [
          {
            id: 'judged',
            deny: true,
            'default.modelJudge': { config: 'nested-judge', instructions: 'Be polite.' },
          },
        ],
      };
      judge.enqueue({ text: '{"verdict": true, "explanation": "polite enough"}' });
      const { response } = await client(gateway, config, { traceparent })
        .chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('thank you') })
        .withResponse();
      const requestSpanId = response.headers.get('traceparent')!.split('-')[2];

      // The request, its call, its hook; the judge's call and its call to the judge model.
      const spans = await spansOf(traceId, 5);
      expect(spans).toHaveLength(5);
      // One root in the gateway, under the client's span: the request's.
      const request = only(spans, (span) => span.parentSpanId === parentId);
      expect(request).toMatchObject({ spanId: requestSpanId, kind: SERVER });
      expect(request.flags).toBe(0x301);
      only(spans, (span) => span.kind === SERVER);
      const hook = only(spans, (span) => span.name === 'hook judged');
      expect(hook).toMatchObject({ kind: INTERNAL, parentSpanId: requestSpanId });
      const judgeCall = only(spans, (span) => span.parentSpanId === hook.spanId);
      expect(judgeCall).toMatchObject({ kind: INTERNAL, name: 'chat judge-model' });
      // Its parent is the gateway's own span, not another service's.
      expect(judgeCall.flags).toBe(0x101);
      const judgeModel = only(spans, (span) => span.parentSpanId === judgeCall.spanId);
      expect(judgeModel).toMatchObject({ kind: CLIENT, name: 'chat judge-model' });
      expect(judgeModel.attributes['gateway.target']).toBeDefined();
      const call = only(spans, (span) => span.kind === CLIENT && span.parentSpanId === requestSpanId);
      expect(call.name).toBe('chat gpt-4o-mini');

      // In the log, the judge's call is a call of its own (each call's one attempt is its record): not
      // an attempt of the judged request, which the console would list among the request's.
      const records = await logsOf(gateway, uuidOf(traceId), 2);
      expect(records).toHaveLength(2);
      const judgeRecord = records.find((record) => record.span_id === judgeCall.spanId);
      expect(judgeRecord).toMatchObject({ is_attempt: false, parent_span_id: null });
      const requestRecord = records.find((record) => record.span_id === requestSpanId);
      expect(requestRecord).toMatchObject({ is_attempt: false, parent_span_id: parentId });
      expect(records.filter((record) => record.parent_span_id === requestSpanId)).toEqual([]);
    },
  );

  it("traces the semantic cache's embedding under the request's span", async () => {
    const { traceparent, traceId, parentId } = newTraceparent();
    const config = target(fake, {
      cache: { mode: 'semantic', embedding: { virtual_key: 'nested-embedder', model: 'bow-embedding' } },
    });
    const { response } = await client(gateway, config, { traceparent })
      .chat.completions.create({
        model: 'gpt-4o-mini',
        messages: userMessage(`What is the capital of ${randomBytes(4).toString('hex')}?`),
      })
      .withResponse();
    expect(response.headers.get('x-gateway-cache-status')).toBe('SEMANTIC_MISS');
    const requestSpanId = response.headers.get('traceparent')!.split('-')[2];

    // The request and its call; the embedding's call and its call to the embedding model.
    const spans = await spansOf(traceId, 4);
    expect(spans).toHaveLength(4);
    const request = only(spans, (span) => span.parentSpanId === parentId);
    expect(request).toMatchObject({ spanId: requestSpanId, kind: SERVER });
    only(spans, (span) => span.kind === SERVER);
    const embedding = only(spans, (span) => span.kind === INTERNAL && span.parentSpanId === requestSpanId);
    expect(embedding.name).toBe('embeddings bow-embedding');
    expect(embedding.attributes['gen_ai.operation.name']).toBe('embeddings');
    expect(embedding.flags).toBe(0x101);
    const embeddingModel = only(spans, (span) => span.parentSpanId === embedding.spanId);
    expect(embeddingModel).toMatchObject({ kind: CLIENT, name: 'embeddings bow-embedding' });
    const call = only(spans, (span) => span.kind === CLIENT && span.parentSpanId === requestSpanId);
    expect(call.name).toBe('chat gpt-4o-mini');

    const records = await logsOf(gateway, uuidOf(traceId), 2);
    expect(records).toHaveLength(2);
    const embeddingRecord = records.find((record) => record.span_id === embedding.spanId);
    expect(embeddingRecord).toMatchObject({
      endpoint: 'embeddings',
      is_attempt: false,
      parent_span_id: null,
    });
    expect(records.filter((record) => record.parent_span_id === requestSpanId)).toEqual([]);
  });
});

/**
 * The spans of one call, once its own request span (the gateway's root, under the client's span) and
 * `judges` judge calls are in: a judge's call ends before the call that asked it does, and a call's spans
 * are exported together, so the trace is whole by then.
 */
async function wholeTrace(traceId: string, parentId: string, judges: number): Promise<ReceivedSpan[]> {
  const all = await receiver.waitFor((spans) => {
    const ours = spans.filter((span) => span.traceId === traceId);
    return (
      ours.some((span) => span.parentSpanId === parentId) &&
      ours.filter((span) => span.kind === INTERNAL && span.name === 'chat judge-model').length >= judges
    );
  });
  return all.filter((span) => span.traceId === traceId);
}

/** Every span but the request's has its parent among the trace's spans; the judge calls' are hook spans. */
function expectConnected(spans: ReceivedSpan[], parentId: string, hookName: string): ReceivedSpan[] {
  const shown = JSON.stringify(spans.map((span) => [span.name, span.kind, span.spanId, span.parentSpanId]));
  const ids = new Set(spans.map((span) => span.spanId));
  expect(ids.size, shown).toBe(spans.length);
  const request = only(spans, (span) => span.parentSpanId === parentId);
  for (const span of spans) {
    if (span !== request) expect(ids.has(span.parentSpanId!), shown).toBe(true);
  }
  const hooks = spans.filter((span) => span.name === hookName);
  for (const judgeCall of spans.filter(
    (span) => span.kind === INTERNAL && span.name === 'chat judge-model',
  )) {
    expect(
      hooks.map((hook) => hook.spanId),
      shown,
    ).toContain(judgeCall.parentSpanId);
  }
  for (const hook of hooks) expect(hook.parentSpanId, shown).toBe(request.spanId);
  return hooks;
}

describe('a judge asked by the hooks of a run that did not answer', () => {
  const judged = {
    input_guardrails: [
      {
        id: 'judged',
        deny: true,
        'default.modelJudge': { config: 'nested-judge', instructions: 'Be polite.' },
      },
    ],
  };
  const approval = '{"verdict": true, "explanation": "polite enough"}';

  it('is traced under the hook span of its own attempt when a retry ran the hooks again', async () => {
    const { traceparent, traceId, parentId } = newTraceparent();
    const config = { ...target(fake, judged), retry: { attempts: 1, on_status_codes: [500] } };
    judge.enqueue({ text: approval });
    judge.enqueue({ text: approval });
    fake.enqueue({ status: 500 });
    const { response } = await client(gateway, config, { traceparent })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('thank you') })
      .withResponse();
    expect(response.status).toBe(200);

    const spans = await wholeTrace(traceId, parentId, 2);
    const hooks = expectConnected(spans, parentId, 'hook judged');
    // One hook span for each run of the hook, each with its own judge call under it.
    expect(hooks).toHaveLength(2);
    for (const hook of hooks) only(spans, (span) => span.parentSpanId === hook.spanId);
    // The request, its two calls (the first failed, the second its retry), the hooks, and each judge's
    // call with its call to the judge model.
    expect(spans).toHaveLength(9);

    // The log keeps the results of the run that answered only.
    const requestRecord = (await logsOf(gateway, uuidOf(traceId), 3)).find(
      (record) => record.span_id === response.headers.get('traceparent')!.split('-')[2],
    );
    const results = requestRecord?.hook_results as { before_request_hooks: unknown[] } | undefined;
    expect(results?.before_request_hooks).toHaveLength(1);
  });

  it.each([
    ['has no hooks', {}],
    ['has hooks of its own', judged],
  ])('is traced under its hook span when another target answered, which %s', async (_, backupHooks) => {
    const { traceparent, traceId, parentId } = newTraceparent();
    const config = {
      strategy: { mode: 'fallback', on_status_codes: [500] },
      targets: [target(fake, judged), target(judge, backupHooks)],
    };
    const judges = backupHooks === judged ? 2 : 1;
    for (let i = 0; i < judges; i++) judge.enqueue({ text: approval });
    fake.enqueue({ status: 500 });
    const { response } = await client(gateway, config, { traceparent })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('thank you') })
      .withResponse();
    expect(response.status).toBe(200);

    const spans = await wholeTrace(traceId, parentId, judges);
    const hooks = expectConnected(spans, parentId, 'hook judged');
    expect(hooks).toHaveLength(judges);
    // The request, the two targets' calls, the hooks, and each judge's call with its judge model's.
    expect(spans).toHaveLength(3 + 3 * judges);
  });
});
