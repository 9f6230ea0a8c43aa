/**
 * The seams of the call pipeline, used as the next features will use them: a call made without any HTTP
 * request (a job's context, a buffering sink), and a step of one's own in every target's chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import type { ChatCompletionChunk } from '../../src/core/openai-types.js';
import { gatewayFailure } from '../../src/gateway/attempt.js';
import { callContextFromJob } from '../../src/gateway/call-context.js';
import { execute } from '../../src/gateway/execute.js';
import { DEFAULT_TARGET_STEPS, type TargetStep } from '../../src/gateway/steps/index.js';
import { BufferSink } from '../../src/gateway/sink.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, logsOf, target, userMessage } from '../routing/support.js';

let gateway: TestGateway;
let upstream: FakeUpstream;
/** What the test step saw: one line per call of a target. */
const seen: string[] = [];

/** A step of the test's own: notes each call and refuses a model named `blocked` without calling. */
const noteAndBlock: TargetStep = (next) => async (call) => {
  seen.push(`${call.path || 'root'} ${call.model} retry=${call.retry}`);
  if (call.model === 'blocked') {
    return gatewayFailure(new GatewayError('forbidden', 'blocked by the test step'), 'config');
  }
  return next(call);
};

beforeAll(async () => {
  upstream = await startFakeOpenAI({ name: 'seams' });
  gateway = await startGateway({ targetSteps: [...DEFAULT_TARGET_STEPS, noteAndBlock] });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

async function jobContext() {
  const caller = await gateway.server.deps.lookups.apiKey(gateway.adminKey);
  if (!caller) throw new Error('the admin key is not in the store');
  return callContextFromJob({
    caller,
    config: target(upstream),
    url: '/v1/chat/completions',
    signal: new AbortController().signal,
  });
}

describe('a call with no HTTP request behind it', () => {
  it('answers a job into a buffer sink, and is recorded', async () => {
    const sink = new BufferSink();
    const ctx = await jobContext();
    const body = { model: 'gpt-4o-mini', messages: userMessage('hello from a job') };
    const result = await execute(gateway.server.deps, { ctx, endpoint: 'chat', body }, sink);
    expect(result.status).toBe(200);
    const buffered = await sink.result;
    expect(buffered.kind).toBe('answer');
    if (buffered.kind !== 'answer') return;
    expect(buffered.answer.body).toMatchObject({ object: 'chat.completion' });

    const records = await logsOf(gateway, ctx.traceId, 1);
    expect(records[0]).toMatchObject({ path: '/v1/chat/completions', status: 200, provider: 'openai' });
  });

  it('collects a streamed answer chunk by chunk', async () => {
    const sink = new BufferSink();
    const body = { model: 'gpt-4o-mini', messages: userMessage('stream to a job'), stream: true };
    await execute(gateway.server.deps, { ctx: await jobContext(), endpoint: 'chat', body }, sink);
    const buffered = await sink.result;
    expect(buffered.kind).toBe('stream');
    if (buffered.kind !== 'stream') return;
    expect(buffered.chunks.length).toBeGreaterThan(1);
    // The usage chunk comes through: a buffer keeps everything, only the client's codec filters.
    expect((buffered.chunks.at(-1) as ChatCompletionChunk | undefined)?.usage?.total_tokens).toBeGreaterThan(
      0,
    );
  });
});

describe('a step of its own in the target chain', () => {
  it('sees every call of every target, after the built-in steps, and can stop one', async () => {
    seen.length = 0;
    const config = {
      strategy: { mode: 'fallback' },
      targets: [target(upstream, { override_params: { model: 'blocked' } }), target(upstream)],
    };
    const answer = await client(gateway, config).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: userMessage('through the chain'),
    });
    expect(answer.object).toBe('chat.completion');
    // The first target never reached the upstream: the step threw; the fallback answered.
    expect(seen).toEqual(['targets[0] blocked retry=0', 'targets[1] gpt-4o-mini retry=0']);
  });
});
