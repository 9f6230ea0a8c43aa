/**
 * The console reads what a 409 names from the gateway's message (console/src/dependents.ts): here against
 * the messages a real gateway answers, so a change of their form is seen without a browser.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusalOf } from '../../console/src/dependents.js';
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
    return { status: answer.status, body: (await answer.json()) as { error?: { message: string } } };
  }

  async function made(method: string, path: string, body: unknown) {
    const answer = await call(method, path, body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  }

  it('reads every kind, the versions of a prompt, and those counted but not named', async () => {
    await made('POST', '/virtual-keys', {
      slug: 'named',
      provider: 'openai',
      api_key: 'sk-named-0123456789',
    });
    // More configs than the message names.
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

    const changed = await call('PATCH', '/virtual-keys/named', {
      provider: 'anthropic',
      api_key: 'sk-ant-0123456789',
    });
    expect(changed.status).toBe(409);
    const refusal = refusalOf(changed.body.error!.message);
    expect(refusal).toBeDefined();
    expect(refusal!.lead).toMatch(
      /^Changing the provider of the virtual key "named" from openai to anthropic .*:$/,
    );
    expect(refusal!.dependents.filter((dependent) => dependent.kind === 'config')).toHaveLength(10);
    expect(refusal!.dependents[0]).toEqual({
      kind: 'config',
      slug: expect.stringMatching(/^route-/),
      where: 'config.virtual_key',
    });
    expect(refusal!.dependents.slice(10)).toEqual([
      { kind: 'prompt', slug: 'asks', where: 'versions 1, 2' },
      { kind: 'guardrail', slug: 'judged', where: 'guardrail.default.modelJudge.virtual_key' },
    ]);
    expect(refusal!.more).toBe(2);
    expect(refusal!.tail).toMatch(/^Change them first/);

    // A delete's refusal is read the same way.
    const deleted = await call('DELETE', '/virtual-keys/named');
    expect(deleted.status).toBe(409);
    expect(refusalOf(deleted.body.error!.message)?.dependents).toHaveLength(12);
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

    for (const [method, path, body, lead] of [
      ['DELETE', '/configs/shared', undefined, /^Deleting the config "shared" /],
      ['PATCH', '/configs/shared', { status: 'archived' }, /^Archiving the config "shared" /],
    ] as const) {
      const refused = await call(method, path, body);
      expect(refused.status).toBe(409);
      const refusal = refusalOf(refused.body.error!.message);
      expect(refusal?.lead).toMatch(lead);
      expect(refusal?.dependents).toEqual([{ kind: 'prompt', slug: 'routed', where: 'version 1' }]);
    }

    const guardrail = await call('DELETE', '/guardrails/listed');
    expect(guardrail.status).toBe(409);
    expect(refusalOf(guardrail.body.error!.message)?.dependents).toEqual([
      { kind: 'config', slug: 'user', where: 'config.input_guardrails[0]' },
    ]);

    // Only configs name a prompt: the message says so before the list, which names no kind.
    const prompt = await call('DELETE', '/prompts/targeted');
    expect(prompt.status).toBe(409);
    const refusal = refusalOf(prompt.body.error!.message);
    expect(refusal?.lead).toMatch(/^Deleting the prompt "targeted" would make configs whose targets/);
    expect(refusal?.dependents).toEqual([{ kind: 'config', slug: 'user', where: 'config.prompt_id' }]);
    expect(refusal?.tail).toMatch(/^Change them first/);
  });

  it('reads a list naming no kind only alone, and only after a lead that names one', () => {
    expect(refusalOf('Deleting "x" breaks: "a" (config.prompt_id). Change them')).toBeUndefined();
    expect(
      refusalOf('Deleting the prompt "configs" breaks prompts: "a" (version 1); configs "b" (config.x). Go'),
    ).toBeUndefined();
    expect(
      refusalOf('Deleting the prompt "configs" breaks prompts: "a" (version 1). Go')?.dependents,
    ).toEqual([{ kind: 'prompt', slug: 'a', where: 'version 1' }]);
  });

  it('reads nothing from a message in another form', () => {
    expect(refusalOf('The virtual key is busy')).toBeUndefined();
    expect(refusalOf('Refused: for a reason. Try again')).toBeUndefined();
  });
});
