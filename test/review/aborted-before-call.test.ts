/**
 * A client that went away before the call started (during config, credential, cache or breaker look-ups)
 * must not be answered by a provider call: the abort already happened, so a listener added afterwards
 * never fires and the call would run, and be billed, to its end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { runAttempt } from '../../src/gateway/attempt.js';
import { runModelAttempt } from '../../src/gateway/fanout.js';
import { createUpstreamClient, type UpstreamClient } from '../../src/gateway/upstream.js';
import { findAdapter } from '../../src/providers/registry.js';
import type { ResolvedTarget } from '../../src/gateway/resolve-target.js';
import { validateChatCompletionRequest } from '../../src/core/schemas/index.js';
import type { AdapterRequest } from '../../src/providers/types.js';

let upstream: FakeUpstream;
let client: UpstreamClient;

beforeAll(async () => {
  upstream = await startFakeOpenAI({ name: 'gone' });
  client = createUpstreamClient('private');
});

afterAll(async () => {
  await client?.close();
  await upstream?.close();
});

function call(provider: string, body: Record<string, unknown>) {
  const adapter = findAdapter(provider)!;
  const target = { provider: adapter.id, api_key: 'sk-test', custom_host: upstream.url };
  const resolved: ResolvedTarget = { adapter, target, node: target, path: '' };
  const request: AdapterRequest = {
    endpoint: 'chat',
    body: validateChatCompletionRequest(body),
    stream: false,
    target,
    forwardHeaders: {},
    clientHeaders: {},
    strictCompat: true,
  };
  return {
    resolved,
    request,
    upstream: client,
    clientSignal: AbortSignal.abort(),
    timeoutMs: 10_000,
    idleTimeoutMs: 10_000,
    limits: { answerBytes: 1 << 20, eventBytes: 1 << 20 },
  };
}

describe('a client gone before the call', () => {
  it('makes no provider call', async () => {
    const before = upstream.requests.length;
    const outcome = await runAttempt(
      call('openai', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(outcome).toMatchObject({ ok: false, reason: 'client_gone' });
    expect(upstream.requests.length).toBe(before);
  });

  it('makes no provider call when n is fanned out either', async () => {
    const before = upstream.requests.length;
    // cohere answers one choice per call; its calls would reach the fake's URL all the same.
    const outcome = await runModelAttempt(
      call('cohere', { model: 'command-r', n: 2, messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(outcome).toMatchObject({ ok: false, reason: 'client_gone' });
    expect(upstream.requests.length).toBe(before);
  });
});
