/**
 * The engine's rules for one hook list, shown with checks of the test's own (CheckDefinitions, the
 * contract any check implements): parallel and sequential checks, timeouts under each fail mode, `not`,
 * a throwing check, mutators, async hooks, deny and feedback.
 */
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import type { CheckDefinition, CheckServices, CheckVerdict } from '../../src/hooks/check-types.js';
import type { CheckSpec, HookSpec } from '../../src/gateway/config/index.js';
import type { HookResult } from '../../src/gateway/hooks/hook-result-types.js';
import { runHooks, type HookEnv, type HookInput } from '../../src/gateway/hooks/run-hooks.js';

const services: CheckServices = {
  postJson: () => Promise.reject(new Error('not here')),
  getJson: () => Promise.reject(new Error('not here')),
  probeUrl: () => Promise.resolve(false),
  judge: () => Promise.reject(new Error('not here')),
};

function env(): HookEnv {
  return { services, signal: new AbortController().signal, pending: [] };
}

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

function definition(id: string, run: CheckDefinition['run']): CheckDefinition {
  return { id, parameters: Type.Object({}), run };
}

function check(def: CheckDefinition, extra: Partial<CheckSpec> = {}): CheckSpec {
  return {
    id: `test.${def.id}`,
    definition: def,
    parameters: {},
    not: false,
    timeoutMs: 5_000,
    onError: 'pass',
    ...extra,
  };
}

function hook(checks: CheckSpec[], extra: Partial<HookSpec> = {}): HookSpec {
  return {
    id: 'h',
    event: 'beforeRequestHook',
    type: 'guardrail',
    async: false,
    sequential: false,
    onFail: { deny: false, feedback: undefined },
    onSuccess: { deny: false, feedback: undefined },
    checks,
    ...extra,
  };
}

const passes = definition('passes', () => ({ verdict: true, explanation: 'fine' }));
const fails = definition('fails', () => ({ verdict: false }));
const never = definition(
  'never',
  (ctx) =>
    new Promise<CheckVerdict>((_resolve, reject) => {
      ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
    }),
);

describe('runHooks', () => {
  it('runs the checks of a hook in parallel: two checks that wait for each other both finish', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const waits = definition('waits', async () => {
      await released;
      return { verdict: true };
    });
    const releases = definition('releases', () => {
      release();
      return Promise.resolve({ verdict: true });
    });
    const results: HookResult[] = [];
    const outcome = await runHooks([hook([check(waits), check(releases)])], input, env(), results);
    expect(outcome.failed).toBe(false);
    expect(results[0].checks.map((c) => [c.id, c.verdict, c.error])).toEqual([
      ['test.waits', true, null],
      ['test.releases', true, null],
    ]);
  });

  it('a list whose checks all answer at once gives its outcome at once, without a promise', () => {
    const results: HookResult[] = [];
    const outcome = runHooks(
      [hook([check(passes)]), hook([check(fails)], { id: 'h2' })],
      input,
      env(),
      results,
    );
    expect(outcome).not.toBeInstanceOf(Promise);
    expect(outcome).toMatchObject({ failed: true, denied: undefined });
    expect(results.map((r) => [r.id, r.verdict])).toEqual([
      ['h', true],
      ['h2', false],
    ]);
  });

  it('a list waits on a hook whose check answers later, then runs the hooks after it in order', async () => {
    const later = definition('later', () => Promise.resolve({ verdict: false }));
    const results: HookResult[] = [];
    const running = runHooks(
      [
        hook([check(passes)], { id: 'first' }),
        hook([check(later)], { id: 'second', onFail: { deny: true, feedback: undefined } }),
        hook([check(passes)], { id: 'third' }),
      ],
      input,
      env(),
      results,
    );
    expect(running).toBeInstanceOf(Promise);
    const outcome = await running;
    expect(outcome).toMatchObject({ failed: true, denied: { id: 'second' } });
    expect(results.map((r) => r.id)).toEqual(['first', 'second', 'third']);
  });

  it('runs the checks of a sequential hook one after the other: the same pair waits in vain', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const waits = definition('waits', async (ctx) => {
      await Promise.race([
        released,
        new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('x')))),
      ]);
      return { verdict: true };
    });
    const releases = definition('releases', () => {
      release();
      return { verdict: true };
    });
    const results: HookResult[] = [];
    await runHooks(
      [hook([check(waits, { timeoutMs: 50, onError: 'fail' }), check(releases)], { sequential: true })],
      input,
      env(),
      results,
    );
    expect(results[0].checks.map((c) => [c.id, c.verdict, c.error?.timed_out ?? null])).toEqual([
      ['test.waits', false, true],
      ['test.releases', true, null],
    ]);
  });

  it('a check that runs out of time counts as passed under on_error: pass, and says so', async () => {
    const results: HookResult[] = [];
    const outcome = await runHooks(
      [hook([check(never, { timeoutMs: 30 })], { onFail: { deny: true, feedback: undefined } })],
      input,
      env(),
      results,
    );
    expect(outcome).toMatchObject({ failed: false, denied: undefined });
    expect(results[0].checks[0]).toMatchObject({
      verdict: true,
      on_error: 'pass',
      error: { message: 'timed out after 30 ms', timed_out: true },
    });
  });

  it('a check that runs out of time counts as failed under on_error: fail, and a denying hook denies', async () => {
    const results: HookResult[] = [];
    const outcome = await runHooks(
      [
        hook([check(never, { timeoutMs: 30, onError: 'fail' })], {
          onFail: { deny: true, feedback: { value: 1 } },
        }),
      ],
      input,
      env(),
      results,
    );
    expect(outcome.failed).toBe(true);
    expect(outcome.denied).toMatchObject({ id: 'h', verdict: false, deny: true, feedback: { value: 1 } });
    expect(results[0].checks[0]).toMatchObject({
      verdict: false,
      on_error: 'fail',
      error: { timed_out: true },
    });
  });

  it('a check that throws counts as its on_error says; `not` inverts verdicts, never errors', async () => {
    const throws = definition('throws', () => {
      throw new Error('boom');
    });
    const results: HookResult[] = [];
    await runHooks(
      [
        hook([
          check(throws, { onError: 'fail', not: true }),
          check(fails, { not: true }),
          check(passes, { not: true }),
        ]),
      ],
      input,
      env(),
      results,
    );
    expect(results[0].checks.map((c) => [c.verdict, c.error?.message ?? null])).toEqual([
      [false, 'boom'],
      [true, null],
      [false, null],
    ]);
    expect(results[0].verdict).toBe(false);
  });

  it('applies a mutator, and the hooks after it see its rewrite', async () => {
    const redacts = definition('redacts', (ctx) => ({
      verdict: true,
      transformed: { messages: [{ role: 'user', content: ctx.request.text.replace('hello', '[X]') }] },
    }));
    let seen = '';
    const reads = definition('reads', (ctx) => {
      seen = ctx.request.text;
      return { verdict: true };
    });
    const results: HookResult[] = [];
    const outcome = await runHooks(
      [hook([check(redacts)], { id: 'm', type: 'mutator' }), hook([check(reads)])],
      input,
      env(),
      results,
    );
    expect(outcome.transformed).toEqual({ messages: [{ role: 'user', content: '[X]' }] });
    expect(seen).toBe('[X]');
    expect(results.map((r) => [r.id, r.transformed])).toEqual([
      ['m', true],
      ['h', false],
    ]);
  });

  it('an async hook is not waited on and never denies; its result arrives when it ends', async () => {
    let finish!: () => void;
    const slow = definition(
      'slow',
      () => new Promise<CheckVerdict>((resolve) => (finish = () => resolve({ verdict: false }))),
    );
    const results: HookResult[] = [];
    const hookEnv = env();
    const outcome = await runHooks(
      [hook([check(slow)], { id: 'audit', async: true, onFail: { deny: true, feedback: undefined } })],
      input,
      hookEnv,
      results,
    );
    expect(outcome).toMatchObject({ failed: false, denied: undefined });
    expect(results).toEqual([]);
    finish();
    await Promise.all(hookEnv.pending);
    expect(results).toMatchObject([{ id: 'audit', async: true, verdict: false, deny: false }]);
  });

  it('on_success may deny, and its feedback is the one recorded', async () => {
    const results: HookResult[] = [];
    const outcome = await runHooks(
      [
        hook([check(passes)], {
          onSuccess: { deny: true, feedback: { value: 5, weight: 2, metadata: { k: 'v' } } },
          onFail: { deny: false, feedback: { value: -5 } },
        }),
      ],
      input,
      env(),
      results,
    );
    expect(outcome.denied).toMatchObject({
      verdict: true,
      deny: true,
      feedback: { value: 5, weight: 2, metadata: { k: 'v' } },
    });
  });
});
