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

  it('reads nothing from a message in another form', () => {
    expect(refusalOf('The virtual key is busy')).toBeUndefined();
    expect(refusalOf('Refused: for a reason. Try again')).toBeUndefined();
  });
});
