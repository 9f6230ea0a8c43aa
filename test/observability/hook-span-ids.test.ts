/**
 * A hook run's span id, which a call a check has the gateway make (a judge's) is traced under: drawn when a
 * check first reads it, one for all the checks of one run of a hook, parallel or sequential, and kept in
 * the call's current hook log for the trace. A hook whose checks never read it keeps nothing.
 */
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import type { CheckDefinition, CheckServices } from '../../src/hooks/check-types.js';
import type { CheckSpec, HookSpec } from '../../src/gateway/config/index.js';
import type { HookResult, HookRunLog } from '../../src/gateway/hooks/hook-result-types.js';
import { runHooks, type HookInput } from '../../src/gateway/hooks/run-hooks.js';

const services: CheckServices = {
  postJson: () => Promise.reject(new Error('not here')),
  getJson: () => Promise.reject(new Error('not here')),
  probeUrl: () => Promise.resolve(false),
  judge: () => Promise.reject(new Error('not here')),
};

const input: HookInput = {
  event: 'beforeRequestHook',
  requestType: 'chatComplete',
  callType: 'chatComplete',
  request: { json: { messages: [{ role: 'user', content: 'hello' }] }, text: 'hello' },
  provider: 'openai',
  model: 'gpt-4o-mini',
  metadata: {},
  headers: {},
};

function newLog(): HookRunLog {
  return {
    path: '',
    results: { before_request_hooks: [], after_request_hooks: [] },
    pending: [],
    requestBody: undefined,
    answer: undefined,
    resultsText: undefined,
    traced: undefined,
  };
}

/** A check that reads its hook's span id into `seen` (at once, or after a turn of the loop). */
function reading(seen: string[], later = false): CheckDefinition {
  return {
    id: 'reads',
    parameters: Type.Object({}),
    run: (ctx) => {
      seen.push(ctx.hookSpanId!);
      return later ? Promise.resolve({ verdict: true }) : { verdict: true };
    },
  };
}

const quiet: CheckDefinition = { id: 'quiet', parameters: Type.Object({}), run: () => ({ verdict: true }) };

function check(definition: CheckDefinition): CheckSpec {
  return {
    id: `test.${definition.id}`,
    definition,
    parameters: {},
    not: false,
    timeoutMs: 5_000,
    onError: 'pass',
  };
}

function hook(id: string, checks: CheckDefinition[], sequential = false): HookSpec {
  return {
    id,
    event: 'beforeRequestHook',
    type: 'guardrail',
    async: false,
    sequential,
    onFail: { deny: false, feedback: undefined },
    onSuccess: { deny: false, feedback: undefined },
    checks: checks.map(check),
  };
}

async function run(hooks: HookSpec[], call: { hooks: HookRunLog | undefined }): Promise<HookResult[]> {
  const results: HookResult[] = [];
  await runHooks(
    hooks,
    input,
    { services, signal: new AbortController().signal, pending: [], call },
    results,
  );
  return results;
}

describe("a hook run's span id", () => {
  it('is neither drawn nor kept when no check reads it', async () => {
    const call = { hooks: newLog() };
    await run([hook('a', [quiet, quiet]), hook('b', [quiet], true)], call);
    expect(call.hooks.traced).toBeUndefined();
  });

  it.each([
    ['parallel', false],
    ['sequential', true],
  ])('is one for all the checks of a %s hook, and its own for each hook', async (_, sequential) => {
    const seenA: string[] = [];
    const seenB: string[] = [];
    const call = { hooks: newLog() };
    const results = await run(
      [
        hook('a', [quiet, reading(seenA), reading(seenA, true)], sequential),
        hook('b', [reading(seenB, true), quiet], sequential),
        hook('c', [quiet], sequential),
      ],
      call,
    );
    expect(seenA).toHaveLength(2);
    expect(seenA[1]).toBe(seenA[0]);
    expect(seenA[0]).toMatch(/^[0-9a-f]{16}$/);
    expect(seenB).toHaveLength(1);
    expect(seenB[0]).not.toBe(seenA[0]);
    expect(call.hooks.traced?.map((traced) => [traced.result, traced.spanId])).toEqual([
      [results[0], seenA[0]],
      [results[1], seenB[0]],
    ]);
  });

  it('is kept in the log current when the hook ends', async () => {
    const seen: string[] = [];
    const first = newLog();
    const call: { hooks: HookRunLog | undefined } = { hooks: first };
    let release!: () => void;
    const waits: CheckDefinition = {
      id: 'waits',
      parameters: Type.Object({}),
      run: async (ctx) => {
        seen.push(ctx.hookSpanId!);
        await new Promise<void>((resolve) => (release = resolve));
        return { verdict: true };
      },
    };
    const running = run([hook('a', [waits])], call);
    // A retry replaces the log while the hook still runs.
    const second = newLog();
    call.hooks = second;
    release();
    await running;
    expect(first.traced).toBeUndefined();
    expect(second.traced?.map((traced) => traced.spanId)).toEqual(seen);
  });
});
