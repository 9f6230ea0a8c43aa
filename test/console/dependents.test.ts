/**
 * The console reads what a 409 names from the gateway's `error.dependents` (console/src/dependents.ts):
 * here against what a real gateway answers, so a change of its form is seen without a browser.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countedDependents, dependentsOf, listedDependents } from '../../console/src/dependents.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

describe('the dependents a 409 names, as the console reads them', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startGateway();
  });

  afterAll(async () => {
    await gateway?.close();
  });

  async function call(method: string, path: string, body?: unknown) {
    const answer = await fetch(`${gateway.url}${path}`, {
      method,
      headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return {
      status: answer.status,
      body: (await answer.json()) as { error?: { message: string; dependents?: unknown } },
    };
  }

  async function made(method: string, path: string, body: unknown) {
    const answer = await call(method, path, body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  }

  /** The dependents of a refusal, as the console reads them. */
  async function refused(method: string, path: string, body?: unknown) {
    const answer = await call(method, path, body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(409);
    const dependents = dependentsOf(answer.body.error?.dependents);
    expect(dependents).toBeDefined();
    return dependents!;
  }

  it('reads every kind, the versions of a prompt, and those counted but not named', async () => {
    await made('POST', '/virtual-keys', {
      slug: 'named',
      provider: 'openai',
      api_key: 'sk-named-0123456789',
    });
    // More configs than the gateway names.
    for (let i = 0; i < 12; i++) {
      await made('POST', '/configs', {
        slug: `route-${String(i).padStart(2, '0')}`,
        config: { virtual_key: 'named', override_params: { model: 'gpt-4o-mini' } },
      });
    }
    const prompt = { string: '[{"role":"user","content":"hi"}]', parameters: { model: 'gpt-4o-mini' } };
    await made('POST', '/prompts', { slug: 'asks', ...prompt, virtual_key: 'named' });
    await made('PUT', '/prompts/asks', { ...prompt, virtual_key: 'named' });
    await made('POST', '/guardrails', {
      slug: 'judged',
      guardrail: { 'default.modelJudge': { instructions: 'Is it polite?', virtual_key: 'named' } },
    });

    const changed = await refused('PATCH', '/virtual-keys/named', {
      provider: 'anthropic',
      api_key: 'sk-ant-0123456789',
    });
    const listed = listedDependents(changed);
    expect(listed.filter((dependent) => dependent.kind === 'config')).toHaveLength(10);
    expect(listed[0]).toEqual({
      kind: 'config',
      slug: expect.stringMatching(/^route-/),
      where: 'config.virtual_key',
    });
    expect(listed.slice(10)).toEqual([
      { kind: 'prompt', slug: 'asks', where: 'versions 1, 2' },
      { kind: 'guardrail', slug: 'judged', where: 'guardrail.default.modelJudge.virtual_key' },
    ]);
    expect(countedDependents(changed)).toEqual(['2 more configs']);

    // A delete's refusal is read the same way.
    const deleted = await refused('DELETE', '/virtual-keys/named');
    expect(listedDependents(deleted)).toHaveLength(12);
    expect(countedDependents(deleted)).toEqual(['2 more configs']);
  });

  it('reads the refusals of deleting or archiving a config, a guardrail and a prompt', async () => {
    const target = { provider: 'openai', api_key: 'sk-inline-0123456789' };
    await made('POST', '/configs', { slug: 'shared', config: target });
    await made('POST', '/guardrails', {
      slug: 'listed',
      guardrail: { 'default.regexMatch': { rule: 'secret', not: true }, deny: true },
    });
    await made('POST', '/prompts', { slug: 'targeted', string: '[{"role":"user","content":"hi"}]' });
    await made('POST', '/prompts', {
      slug: 'routed',
      string: '[{"role":"user","content":"hi"}]',
      config: 'shared',
    });
    await made('POST', '/configs', {
      slug: 'user',
      config: { ...target, prompt_id: 'targeted', input_guardrails: ['listed'] },
    });

    for (const [method, path, body] of [
      ['DELETE', '/configs/shared', undefined],
      ['PATCH', '/configs/shared', { status: 'archived' }],
    ] as const) {
      const dependents = await refused(method, path, body);
      expect(listedDependents(dependents)).toEqual([{ kind: 'prompt', slug: 'routed', where: 'version 1' }]);
      expect(countedDependents(dependents)).toEqual([]);
    }

    expect(listedDependents(await refused('DELETE', '/guardrails/listed'))).toEqual([
      { kind: 'config', slug: 'user', where: 'config.input_guardrails[0]' },
    ]);
    // Only configs name a prompt: the gateway's list of them is read as any other.
    expect(listedDependents(await refused('DELETE', '/prompts/targeted'))).toEqual([
      { kind: 'config', slug: 'user', where: 'config.prompt_id' },
    ]);
  });

  it("reads the reason the gateway gives for a prompt's versions", async () => {
    await made('POST', '/prompts/partials', { slug: 'footer', string: 'Bye.' });
    await made('POST', '/prompts', { slug: 'letter', string: '[{"role":"user","content":"{{>footer}}"}]' });
    await made('PUT', '/prompts/partials/footer?force=true', { string: 'Say "bye".' });
    const [dependent] = listedDependents(
      await refused('PUT', '/prompts/partials/footer/publish', { version: 2 }),
    );
    expect(dependent).toEqual({
      kind: 'prompt',
      slug: 'letter',
      where: 'version 1',
      reason: expect.any(String),
    });
    expect(dependent.reason!.length).toBeGreaterThan(0);
  });

  it('reads nothing from a value in another form', () => {
    expect(dependentsOf(undefined)).toBeUndefined();
    expect(dependentsOf('configs "a" (config.prompt_id)')).toBeUndefined();
    expect(dependentsOf({ configs: [], prompts: [] })).toBeUndefined();
    expect(dependentsOf({ configs: [{ slug: 'a' }], prompts: [], guardrails: [] })).toBeUndefined();
    expect(
      dependentsOf({ configs: [], prompts: [{ slug: 'a', versions: ['1'] }], guardrails: [] }),
    ).toBeUndefined();
    // A count in another form is left out, what is named is kept.
    expect(
      dependentsOf({ configs: [], prompts: [], guardrails: [{ slug: 'g', param: 'p' }], more: 3 }),
    ).toEqual({ configs: [], prompts: [], guardrails: [{ slug: 'g', param: 'p' }] });
    expect(
      countedDependents({
        configs: [],
        prompts: [],
        guardrails: [],
        more: { configs: 0, prompts: 1, guardrails: 4 },
      }),
    ).toEqual(['1 more prompt', '4 more guardrails']);
  });
});
