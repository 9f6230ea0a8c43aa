/**
 * Every 409 `conflict` refusing a change for what depends on it names them in `error.dependents`, beside
 * the OpenAI error object's own members (docs/management-api.md): the configs and guardrails with where
 * each names the thing, the prompts with their versions (and, where the refusal judged them, why each
 * fails), at most 10 of each and the rest counted in `more`. One case per kind of refusal.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAzure, type FakeAzure } from '../fakes/azure/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call, client, expectError, type Client, type Reply } from './http.js';

const template = JSON.stringify([{ role: 'user', content: 'hi' }]);
const TARGET = { provider: 'openai', api_key: 'sk-inline-0123456789' };

/** The refusal's error object: the usual members, and `dependents`. */
function refused(reply: Reply, param: string) {
  expect(reply.status, reply.text).toBe(409);
  const error = reply.body.error;
  expect(Object.keys(error).sort()).toEqual(['code', 'dependents', 'message', 'param', 'type']);
  expect(error).toMatchObject({ type: 'invalid_request_error', code: 'conflict', param });
  return error as { message: string; dependents: unknown };
}

describe('error.dependents of a 409 refusing a change for what depends on it', () => {
  let gateway: TestGateway;
  let admin: Client;
  let azure: FakeAzure;

  beforeAll(async () => {
    azure = await startFakeAzure();
    gateway = await startGateway();
    admin = client(gateway.url, gateway.adminKey);
  });
  afterAll(async () => {
    await gateway?.close();
    await azure?.close();
  });

  async function made(method: 'post' | 'put', path: string, body: unknown) {
    const answer = await admin[method](path, body);
    expect(answer.status, answer.text).toBe(200);
  }

  it('deleting or archiving a config names the prompts sending their calls to it and what judges through it', async () => {
    await made('post', '/configs', { slug: 'shared', config: TARGET });
    await made('post', '/configs', {
      slug: 'judging',
      config: {
        ...TARGET,
        input_guardrails: [{ 'default.modelJudge': { instructions: 'Polite?', config: 'shared' } }],
      },
    });
    await made('post', '/prompts', { slug: 'routed', string: template, config: 'shared' });
    await made('put', '/prompts/routed', { string: template, config: 'shared' });
    const dependents = {
      configs: [{ slug: 'judging', param: 'config.input_guardrails[0].default.modelJudge.config' }],
      prompts: [{ slug: 'routed', versions: [1, 2] }],
      guardrails: [],
    };

    const deleted = refused(await admin.delete('/configs/shared'), 'id');
    expect(deleted.dependents).toEqual(dependents);
    expect(deleted.message).toMatch(/^Deleting the config "shared" /);
    const archived = refused(await admin.patch('/configs/shared', { status: 'archived' }), 'status');
    expect(archived.dependents).toEqual(dependents);
  });

  it('deleting a virtual key or changing its provider names every kind, at most 10 of each, the rest counted', async () => {
    await made('post', '/virtual-keys', {
      slug: 'named',
      provider: 'openai',
      api_key: 'sk-named-0123456789',
    });
    for (let i = 0; i < 12; i++) {
      await made('post', '/configs', {
        slug: `route-${String(i).padStart(2, '0')}`,
        config: { virtual_key: 'named', override_params: { model: 'gpt-4o-mini' } },
      });
    }
    const prompt = { string: template, parameters: { model: 'gpt-4o-mini' }, virtual_key: 'named' };
    await made('post', '/prompts', { slug: 'asks', ...prompt });
    await made('put', '/prompts/asks', prompt);
    await made('post', '/guardrails', {
      slug: 'judged',
      guardrail: { 'default.modelJudge': { instructions: 'Is it polite?', virtual_key: 'named' } },
    });

    for (const [reply, param] of [
      [await admin.delete('/virtual-keys/named'), 'slug'],
      [
        await admin.patch('/virtual-keys/named', { provider: 'anthropic', api_key: 'sk-ant-0123456789' }),
        'provider',
      ],
    ] as const) {
      const { dependents } = refused(reply, param) as {
        dependents: { configs: Array<{ slug: string; param: string }> };
      };
      expect(dependents).toEqual({
        configs: expect.any(Array),
        prompts: [{ slug: 'asks', versions: [1, 2] }],
        guardrails: [{ slug: 'judged', param: 'guardrail.default.modelJudge.virtual_key' }],
        more: { configs: 2, prompts: 0, guardrails: 0 },
      });
      expect(dependents.configs).toHaveLength(10);
      for (const config of dependents.configs) {
        expect(config).toEqual({ slug: expect.stringMatching(/^route-\d\d$/), param: 'config.virtual_key' });
      }
    }
  });

  it('changing a setting names what would fail, each with why', async () => {
    await made('post', '/virtual-keys', {
      slug: 'azure-aliases',
      provider: 'azure-openai',
      api_key: azure.apiKey,
      custom_host: azure.url,
      deployments: [
        { alias: 'big', deployment_id: 'gpt4o', api_version: '2024-10-21' },
        { alias: 'small', deployment_id: 'gpt4o-mini', api_version: '2024-10-21' },
      ],
    });
    await made('post', '/configs', {
      slug: 'picks-small',
      config: { virtual_key: 'azure-aliases', override_params: { model: 'small' } },
    });
    await made('post', '/prompts', {
      slug: 'asks-small',
      string: template,
      parameters: { model: 'small' },
      virtual_key: 'azure-aliases',
    });

    const error = refused(
      await admin.patch('/virtual-keys/azure-aliases', {
        deployments: [{ alias: 'big', deployment_id: 'gpt4o', api_version: '2024-10-21' }],
      }),
      'deployments',
    );
    expect(error.dependents).toEqual({
      configs: [
        { slug: 'picks-small', param: 'config.virtual_key', reason: expect.stringContaining('small') },
      ],
      prompts: [{ slug: 'asks-small', versions: [1], reason: expect.stringContaining('small') }],
      guardrails: [],
    });
  });

  it('deleting a prompt or a guardrail names the configs naming it', async () => {
    await made('post', '/guardrails', {
      slug: 'listed',
      guardrail: { 'default.regexMatch': { rule: 'secret', not: true }, deny: true },
    });
    await made('post', '/prompts', { slug: 'targeted', string: template });
    await made('post', '/configs', {
      slug: 'user',
      config: { ...TARGET, prompt_id: 'targeted', input_guardrails: ['listed'] },
    });

    const prompt = refused(await admin.delete('/prompts/targeted'), 'id');
    expect(prompt.dependents).toEqual({
      configs: [{ slug: 'user', param: 'config.prompt_id' }],
      prompts: [],
      guardrails: [],
    });
    const guardrail = refused(await admin.delete('/guardrails/listed'), 'id');
    expect(guardrail.dependents).toEqual({
      configs: [{ slug: 'user', param: 'config.input_guardrails[0]' }],
      prompts: [],
      guardrails: [],
    });
  });

  it('storing, publishing or deleting a partial names the prompt versions it would break, each with why', async () => {
    await made('post', '/prompts/partials', { slug: 'signature', string: 'Regards.' });
    const including = (reference: string) => JSON.stringify([{ role: 'user', content: `{{>${reference}}}` }]);
    await made('post', '/prompts', { slug: 'letter', string: including('signature') });
    await made('post', '/prompts', { slug: 'draft', string: including('signature@latest') });
    const breaks = (slug: string) => ({
      configs: [],
      prompts: [{ slug, versions: [1], reason: expect.any(String) }],
      guardrails: [],
    });

    const stored = refused(
      await admin.put('/prompts/partials/signature', { string: 'Say "bye".' }),
      'string',
    );
    expect(stored.dependents).toEqual(breaks('draft'));
    await made('put', '/prompts/partials/signature?force=true', { string: 'Say "bye".' });
    const published = refused(
      await admin.put('/prompts/partials/signature/publish', { version: 2 }),
      'version',
    );
    expect(published.dependents).toEqual(breaks('letter'));
    const deleted = refused(await admin.delete('/prompts/partials/signature'), 'id');
    expect(deleted.dependents).toEqual(breaks('letter'));
  });

  it("the OpenAPI document gives every operation that takes `force` the refusal's body", async () => {
    const document = (await call(gateway.url, undefined, 'GET', '/openapi.json')).body as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: Array<{ name: string }>;
            responses: Record<string, { content: Record<string, { schema: unknown }> } | undefined>;
          }
        >
      >;
      components: { schemas: Record<string, object> };
    };
    const forceable = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, op]) => op.parameters?.some((parameter) => parameter.name === 'force'))
        .map(([method, op]) => ({ at: `${method} ${path}`, op })),
    );
    expect(forceable.map(({ at }) => at).sort()).toEqual(
      [
        'delete /v1/configs/{id}',
        'patch /v1/configs/{id}',
        'delete /v1/guardrails/{id}',
        'delete /v1/prompts/{id}',
        'put /v1/prompts/{id}',
        'put /v1/prompts/{id}/publish',
        'put /v1/prompts/partials/{id}',
        'put /v1/prompts/partials/{id}/publish',
        'delete /v1/prompts/partials/{id}',
        'patch /v1/virtual-keys/{slug}',
        'delete /v1/virtual-keys/{slug}',
        'patch /v1/providers/{slug}',
        'delete /v1/providers/{slug}',
      ].sort(),
    );
    for (const { at, op } of forceable) {
      expect(op.responses['409']?.content['application/json'].schema, at).toEqual({
        $ref: '#/components/schemas/DependentsConflict',
      });
    }

    await made('post', '/configs', { slug: 'validated', config: TARGET });
    await made('post', '/prompts', { slug: 'validating', string: template, config: 'validated' });
    const reply = await admin.delete('/configs/validated');
    refused(reply, 'id');
    const validate = new Ajv2020({ strict: false }).compile(document.components.schemas.DependentsConflict);
    expect(validate(reply.body), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ error: { ...reply.body.error, dependents: { configs: [{ slug: 'x' }] } } })).toBe(
      false,
    );
  });

  it('a 409 for another reason has none', async () => {
    await made('post', '/configs', { slug: 'taken', config: TARGET });
    expectError(await admin.post('/configs', { slug: 'taken', config: TARGET }), 409, 'conflict', 'slug');
  });
});
