/**
 * A credential's settings that what names it relies on: a stored config's target and a prompt version
 * that pick an Azure deployment by alias (`override_params.model`, `parameters.model`), and nodes that
 * repeat a host setting beside the credential (`custom_host`, `resource_name`), which must be the stored
 * one; and model-judged checks asking their judge through a key (a stored guardrail's, a config target's).
 * A PATCH that would make their calls fail is a 409 naming the setting and them, unless
 * `?force=true`; with it, the calls fail as they do then, at request time. Rotating a secret is never
 * refused. On an SQLite file and on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAzure, type FakeAzure } from '../fakes/azure/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-ai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { call, client, expectError, type Client, ok } from './http.js';

const API_VERSION = '2024-10-21';
const deployment = (alias: string, deploymentId: string) => ({
  alias,
  deployment_id: deploymentId,
  api_version: API_VERSION,
});
/** The settings of an Azure key that calls one deployment, by its name and API version. */
const namedDeployment = { cloudd_deployment_name: 'gpt4o', cloudd_api_version: API_VERSION };
const template = JSON.stringify([{ role: 'user', content: 'hi' }]);

function settingsDependents(start: () => Promise<TestGateway>): void {
  let gateway: TestGateway;
  let admin: Client;
  let azure: FakeAzure;
  let openai: FakeUpstream;
  let otherOpenAI: FakeUpstream;
  let vertex: FakeVertex;

  beforeAll(async () => {
    azure = await startFakeAzure();
    vertex = await startFakeVertex();
    openai = await startFakeOpenAI({ name: 'settings-a' });
    otherOpenAI = await startFakeOpenAI({ name: 'settings-b' });
    gateway = await start();
    admin = client(gateway.url, gateway.adminKey);
  });
  afterAll(async () => {
    await gateway?.close();
    await azure?.close();
    await openai?.close();
    await otherOpenAI?.close();
    await vertex?.close();
  });

  /** Stores an Azure OpenAI credential (a virtual key, or a provider under `/providers`) on the fake Azure,
   * with its secret unless `settings` set `api_key: undefined` (a keyless one: undefined is not sent). */
  const azureKey = (slug: string, settings: Record<string, unknown>, collection = '/virtual-keys') =>
    ok(
      admin.post(collection, {
        slug,
        provider: 'azure-openai',
        api_key: azure.apiKey,
        custom_host: azure.url,
        ...settings,
      }),
    );
  const chatThrough = (config: string) =>
    call(
      gateway.url,
      gateway.adminKey,
      'POST',
      '/chat/completions',
      { model: 'client-model', messages: [{ role: 'user', content: 'hi' }] },
      { 'x-gateway-config': config },
    );
  const promptCall = (prompt: string) =>
    call(gateway.url, gateway.adminKey, 'POST', `/prompts/${prompt}/completions`, { variables: {} });

  it('an Azure key whose deployments lose the alias a config and a prompt pick is refused', async () => {
    await azureKey('azure-aliases', {
      deployments: [deployment('big', 'gpt4o'), deployment('small', 'gpt4o-mini')],
    });
    await ok(
      admin.post('/configs', {
        slug: 'picks-small',
        config: {
          strategy: { mode: 'fallback' },
          targets: [{ virtual_key: 'azure-aliases', override_params: { model: 'small' } }],
        },
      }),
    );
    await ok(
      admin.post('/prompts', {
        slug: 'asks-small',
        string: template,
        parameters: { model: 'small' },
        virtual_key: 'azure-aliases',
      }),
    );
    // A prompt sending its calls to a stored config that sets no model picks by its own.
    await ok(
      admin.post('/configs', {
        slug: 'any-alias',
        config: { virtual_key: 'azure-aliases' },
      }),
    );
    await ok(
      admin.post('/prompts', {
        slug: 'asks-small-via-config',
        string: template,
        parameters: { model: 'small' },
        config: 'any-alias',
      }),
    );
    // One that picks an alias the change keeps is not named.
    await ok(
      admin.post('/configs', {
        slug: 'picks-big',
        config: { virtual_key: 'azure-aliases', override_params: { model: 'big' } },
      }),
    );

    expect((await chatThrough('picks-small')).status).toBe(200);
    expect(azure.requests.at(-1)?.path).toBe('/openai/deployments/gpt4o-mini/chat/completions');
    expect((await promptCall('asks-small')).status).toBe(200);
    expect((await promptCall('asks-small-via-config')).status).toBe(200);

    const onlyBig = { deployments: [deployment('big', 'gpt4o')] };
    const refused = expectError(
      await admin.patch('/virtual-keys/azure-aliases', onlyBig),
      409,
      'conflict',
      'deployments',
    );
    expect(refused.message).toContain('deployments');
    expect(refused.message).toContain('configs "picks-small" (config.targets[0].virtual_key)');
    expect(refused.message).toContain(
      'prompts "asks-small" (version 1), "asks-small-via-config" (version 1)',
    );
    // The config itself sets no model: the client's picks the deployment, which the change may still fit.
    expect(refused.message).not.toContain('"any-alias"');
    expect(refused.message).not.toContain('picks-big');
    expect(refused.message).toContain('?force=true');
    // Removing the list (no deployment of the key's own is left) is refused the same way.
    expectError(
      await admin.patch('/virtual-keys/azure-aliases', { deployments: null }),
      409,
      'conflict',
      'deployments',
    );
    // Nothing of a refused PATCH is stored: the calls still work.
    expect((await chatThrough('picks-small')).status).toBe(200);

    // A default deployment takes what no alias picks: nothing fails, nothing is refused.
    await ok(
      admin.patch('/virtual-keys/azure-aliases', {
        deployments: [deployment('big', 'gpt4o'), { ...deployment('any', 'gpt4o-mini'), is_default: true }],
      }),
    );
    // Rotating the secret is never refused.
    await ok(admin.patch('/virtual-keys/azure-aliases', { api_key: azure.apiKey }));

    await ok(admin.patch('/virtual-keys/azure-aliases?force=true', onlyBig));
    // Forced, the calls fail as they did before the check: at request time.
    expectError(await chatThrough('picks-small'), 400, 'invalid_body', 'model');
    expect((await promptCall('asks-small')).status).toBe(400);
    expect((await promptCall('asks-small-via-config')).status).toBe(400);
    expect((await chatThrough('picks-big')).status).toBe(200);
  });

  it('a host setting that configs repeat beside the key is refused, a rotated secret is not', async () => {
    await ok(
      admin.post('/virtual-keys', {
        slug: 'hosted-key',
        provider: 'openai',
        api_key: 'sk-hosted-0123456789',
        custom_host: openai.url,
      }),
    );
    await ok(
      admin.post('/configs', {
        slug: 'repeats-host',
        config: {
          virtual_key: 'hosted-key',
          custom_host: openai.url,
          override_params: { model: 'gpt-4o-mini' },
        },
      }),
    );
    expect((await chatThrough('repeats-host')).status).toBe(200);

    const moved = { custom_host: otherOpenAI.url, api_key: 'sk-hosted-9876543210' };
    const refused = expectError(
      await admin.patch('/virtual-keys/hosted-key', moved),
      409,
      'conflict',
      'custom_host',
    );
    expect(refused.message).toContain('custom_host');
    expect(refused.message).toContain('configs "repeats-host" (config.custom_host)');
    expect((await chatThrough('repeats-host')).status).toBe(200);

    // Rotating the secret alone keeps the host: never refused.
    await ok(admin.patch('/virtual-keys/hosted-key', { api_key: 'sk-hosted-rotated-0001' }));
    expect((await chatThrough('repeats-host')).status).toBe(200);

    await ok(admin.patch('/virtual-keys/hosted-key?force=true', moved));
    expectError(await chatThrough('repeats-host'), 400, 'custom_host_refused', 'config.custom_host');
  });

  it("a host setting a prompt_id target repeats beside its prompt's key is refused", async () => {
    await ok(
      admin.post('/virtual-keys', {
        slug: 'prompt-hosted-key',
        provider: 'openai',
        api_key: 'sk-prompt-hosted-0123456789',
        custom_host: openai.url,
      }),
    );
    // The config names the prompt, whose version sends its calls to the key: not the key itself.
    for (const [path, body] of [
      [
        '/prompts',
        {
          slug: 'hosted-prompt',
          string: template,
          parameters: { model: 'gpt-4o-mini' },
          virtual_key: 'prompt-hosted-key',
        },
      ],
      [
        '/configs',
        {
          slug: 'repeats-host-by-prompt',
          config: {
            strategy: { mode: 'fallback' },
            targets: [{ prompt_id: 'hosted-prompt', custom_host: openai.url }],
          },
        },
      ],
    ] as const) {
      await ok(admin.post(path, body));
    }
    const complete = () =>
      call(
        gateway.url,
        gateway.adminKey,
        'POST',
        '/prompts/hosted-prompt/completions',
        { variables: {} },
        { 'x-gateway-config': 'repeats-host-by-prompt' },
      );
    expect((await complete()).status).toBe(200);

    const moved = { custom_host: otherOpenAI.url, api_key: 'sk-prompt-hosted-9876543210' };
    const refused = await admin.patch('/virtual-keys/prompt-hosted-key', moved);
    const error = expectError(refused, 409, 'conflict', 'custom_host');
    expect(error.message).toContain('configs "repeats-host-by-prompt" (config.targets[0].custom_host)');
    expect(refused.body.error.dependents.configs.map(({ slug }: { slug: string }) => slug)).toEqual([
      'repeats-host-by-prompt',
    ]);
    expect((await complete()).status).toBe(200);

    await ok(admin.patch('/virtual-keys/prompt-hosted-key?force=true', moved));
    expectError(await complete(), 400, 'custom_host_refused', 'config.targets[0].custom_host');
  });

  it("a catalog provider's Azure resource that a config repeats is refused", async () => {
    await azureKey('azure-resource', { ...namedDeployment, resource_name: 'res-a' }, '/providers');
    await ok(
      admin.post('/configs', {
        slug: 'repeats-resource',
        config: { provider: '@azure-resource', resource_name: 'res-a', override_params: { model: 'gpt-4o' } },
      }),
    );
    expect((await chatThrough('repeats-resource')).status).toBe(200);

    const moved = { resource_name: 'res-b', api_key: azure.apiKey };
    const refused = expectError(
      await admin.patch('/providers/azure-resource', moved),
      409,
      'conflict',
      'resource_name',
    );
    expect(refused.message).toContain('"@azure-resource"');
    expect(refused.message).toContain('configs "repeats-resource" (config.resource_name)');

    // Other settings, and a host setting nothing repeats, are not refused.
    await ok(admin.patch('/providers/azure-resource', { cloudd_api_version: '2024-06-01' }));

    await ok(admin.patch('/providers/azure-resource?force=true', moved));
    expectError(await chatThrough('repeats-resource'), 400, 'invalid_config', 'config.resource_name');
  });

  it('a setting the provider needs, removed from the credential, is refused', async () => {
    await azureKey('azure-versioned', namedDeployment);
    // No model: the client's picks nothing here, the deployment is the key's.
    await ok(
      admin.post('/configs', {
        slug: 'versioned-route',
        config: { virtual_key: 'azure-versioned' },
      }),
    );
    expect((await chatThrough('versioned-route')).status).toBe(200);
    const refused = expectError(
      await admin.patch('/virtual-keys/azure-versioned', { cloudd_api_version: null }),
      409,
      'conflict',
      'cloudd_api_version',
    );
    expect(refused.message).toContain('configs "versioned-route" (config.virtual_key)');
    // The same version under its other name: nothing fails.
    await ok(
      admin.patch('/virtual-keys/azure-versioned', {
        api_version: API_VERSION,
        cloudd_api_version: null,
      }),
    );
    expect((await chatThrough('versioned-route')).status).toBe(200);

    await ok(
      admin.post('/providers', {
        slug: 'azure-endpoint',
        provider: 'azure-ai',
        api_key: 'azure-ai-key-0123456789',
        cloudd_endpoint_name: 'endpoint-a',
        cloudd_region: 'eastus',
      }),
    );
    await ok(
      admin.post('/configs', {
        slug: 'endpoint-route',
        config: { provider: '@azure-endpoint', override_params: { model: 'mistral-large' } },
      }),
    );
    const noRegion = { cloudd_region: null, api_key: 'azure-ai-key-0123456789' };
    expectError(await admin.patch('/providers/azure-endpoint', noRegion), 409, 'conflict', 'cloudd_region');
    // Removing a secret is never refused, though calls may then lack it.
    expect((await admin.patch('/providers/azure-endpoint', { api_key: null })).status).toBe(200);

    expect(
      (await admin.patch('/virtual-keys/azure-versioned?force=true', { api_version: null })).status,
    ).toBe(200);
    expectError(await chatThrough('versioned-route'), 400, 'provider_config_error', 'cloudd_api_version');
    expect((await admin.patch('/providers/azure-endpoint?force=true', noRegion)).status).toBe(200);
    expectError(await chatThrough('endpoint-route'), 400, 'provider_config_error', 'cloudd_region');
  });

  it("a prompt_id target is judged with its prompt's model, a strategy node not at all", async () => {
    await azureKey('azure-prompted', {
      deployments: [deployment('big', 'gpt4o'), deployment('small', 'gpt4o-mini')],
    });
    await ok(
      admin.post('/prompts', {
        slug: 'named-small',
        string: template,
        parameters: { model: 'small' },
      }),
    );
    // The target sends named-small's request: its model, not the calling prompt's, picks the deployment.
    await ok(
      admin.post('/configs', {
        slug: 'prompt-target',
        config: { virtual_key: 'azure-prompted', prompt_id: 'named-small' },
      }),
    );
    await ok(
      admin.post('/prompts', {
        slug: 'calls-big',
        string: template,
        parameters: { model: 'big' },
        config: 'prompt-target',
      }),
    );
    // A strategy node's own key and model go to no call: its one target's model replaces it.
    await ok(
      admin.post('/configs', {
        slug: 'strategy-default',
        config: {
          strategy: { mode: 'fallback' },
          virtual_key: 'azure-prompted',
          override_params: { model: 'big' },
          targets: [{ override_params: { model: 'small' }, request_timeout: 30000 }],
        },
      }),
    );
    expect((await promptCall('calls-big')).status).toBe(200);
    expect(azure.requests.at(-1)?.path).toBe('/openai/deployments/gpt4o-mini/chat/completions');
    expect((await chatThrough('strategy-default')).status).toBe(200);
    expect(azure.requests.at(-1)?.path).toBe('/openai/deployments/gpt4o-mini/chat/completions');

    // Losing big breaks no call: neither the prompt's target nor the strategy's target sends it.
    await ok(
      admin.patch('/virtual-keys/azure-prompted', {
        deployments: [deployment('small', 'gpt4o-mini')],
      }),
    );
    expect((await promptCall('calls-big')).status).toBe(200);
    expect((await chatThrough('strategy-default')).status).toBe(200);
    // Losing small breaks both.
    const refused = expectError(
      await admin.patch('/virtual-keys/azure-prompted', { deployments: [deployment('big', 'gpt4o')] }),
      409,
      'conflict',
      'deployments',
    );
    expect(refused.message).toContain('"prompt-target" (config.virtual_key)');
    expect(refused.message).toContain('"strategy-default" (config.targets[0].virtual_key)');
    expect(refused.message).toContain('"calls-big" (version 1)');
  });

  it('the setting named is the one that breaks the calls, among several sent', async () => {
    await azureKey('azure-several', { deployments: [deployment('big', 'gpt4o')] });
    await ok(
      admin.post('/configs', {
        slug: 'several-route',
        config: { virtual_key: 'azure-several', override_params: { model: 'big' } },
      }),
    );
    // A new API version breaks nothing; removing the deployments does.
    const refused = expectError(
      await admin.patch('/virtual-keys/azure-several', {
        cloudd_api_version: '2024-06-01',
        deployments: null,
      }),
      409,
      'conflict',
      'deployments',
    );
    expect(refused.message).toMatch(/^Changing deployments /);
  });

  it('a keyless credential losing the host that needed no key is refused', async () => {
    await azureKey('azure-keyless', { ...namedDeployment, resource_name: 'res-keyless', api_key: undefined });
    await ok(
      admin.post('/configs', {
        slug: 'keyless-route',
        config: { virtual_key: 'azure-keyless' },
      }),
    );
    // No secret is changed: the key it now needs was never there.
    const refused = expectError(
      await admin.patch('/virtual-keys/azure-keyless', { custom_host: null }),
      409,
      'conflict',
      'custom_host',
    );
    expect(refused.message).toContain('"keyless-route" (config.virtual_key)');
    await ok(admin.patch('/virtual-keys/azure-keyless?force=true', { custom_host: null }));
    const failed = await chatThrough('keyless-route');
    expect(failed.status, failed.text).toBe(400);
    expect(failed.body.error.param, failed.text).toMatch(/api_key$/);
  });

  it("a model-judged check asking its judge through the key is judged: a stored guardrail's, a node's", async () => {
    await azureKey('azure-judge', namedDeployment);
    await ok(
      admin.post('/virtual-keys', {
        slug: 'openai-judged',
        provider: 'openai',
        api_key: 'sk-judged-0123456789',
        custom_host: openai.url,
      }),
    );
    const judge = { instructions: 'Is it polite?', virtual_key: 'azure-judge' };
    await ok(
      admin.post('/guardrails', {
        slug: 'polite-judge',
        guardrail: { 'default.modelJudge': judge },
      }),
    );
    const route = { virtual_key: 'openai-judged', override_params: { model: 'gpt-4o-mini' } };
    // A config listing the stored guardrail does not name the key: the guardrail does.
    await ok(
      admin.post('/configs', {
        slug: 'lists-judge',
        config: { ...route, input_guardrails: ['polite-judge'] },
      }),
    );
    await ok(
      admin.post('/configs', {
        slug: 'judges-inline',
        config: {
          strategy: { mode: 'fallback' },
          targets: [{ ...route, output_guardrails: [{ 'default.modelJudge': judge }] }],
        },
      }),
    );
    // A list passes down to a target setting none: named where it is written.
    await ok(
      admin.post('/configs', {
        slug: 'judges-above',
        config: {
          strategy: { mode: 'fallback' },
          input_guardrails: [{ 'default.modelJudge': judge }],
          targets: [route],
        },
      }),
    );
    // A list every target replaces with its own is never run.
    await ok(
      admin.post('/configs', {
        slug: 'judge-replaced',
        config: {
          strategy: { mode: 'fallback' },
          input_guardrails: [{ 'default.modelJudge': judge }],
          targets: [{ ...route, input_guardrails: [] }],
        },
      }),
    );
    await ok(
      admin.post('/prompts', {
        slug: 'judged-prompt',
        string: template,
        parameters: { model: 'gpt-4o-mini' },
        config: { ...route, input_guardrails: [{ 'default.modelJudge': judge }] },
      }),
    );

    // The judge answers through the key: a verdict against the text refuses the call.
    azure.enqueue({ text: '{"verdict": false, "explanation": "rude"}' });
    const guarded = await chatThrough('lists-judge');
    expect(guarded.status, guarded.text).not.toBe(200);
    expect(azure.requests.at(-1)?.path).toBe('/openai/deployments/gpt4o/chat/completions');

    const refused = await admin.patch('/virtual-keys/azure-judge', { cloudd_api_version: null });
    const error = expectError(refused, 409, 'conflict', 'cloudd_api_version');
    expect(error.message).toMatch(/^Changing cloudd_api_version of the virtual key "azure-judge" /);
    expect(error.message).toContain(
      'configs "judges-inline" (config.targets[0].output_guardrails[0].default.modelJudge.virtual_key)',
    );
    expect(error.message).toContain('prompts "judged-prompt" (version 1)');
    expect(error.message).toContain('guardrails "polite-judge" (guardrail.default.modelJudge.virtual_key)');
    expect(error.message).toContain(
      '"judges-above" (config.input_guardrails[0].default.modelJudge.virtual_key)',
    );
    expect(error.message).not.toContain('lists-judge');
    expect(error.message).not.toContain('judge-replaced');
    const { dependents } = refused.body.error as { dependents: Record<string, unknown> };
    expect(dependents.guardrails).toEqual([
      {
        slug: 'polite-judge',
        param: 'guardrail.default.modelJudge.virtual_key',
        reason: expect.stringContaining('cloudd_api_version'),
      },
    ]);
    // Nothing of the refused PATCH is stored: the judge still answers.
    azure.enqueue({ text: '{"verdict": false, "explanation": "rude"}' });
    expect((await chatThrough('lists-judge')).status).toBe(guarded.status);

    await ok(admin.patch('/virtual-keys/azure-judge?force=true', { cloudd_api_version: null }));
    // Forced, the judge's call fails and the check takes its on_error (pass): the guardrail no longer holds.
    const requests = azure.requests.length;
    expect((await chatThrough('lists-judge')).status).toBe(200);
    expect(azure.requests.length).toBe(requests);
  });

  it("a judge through a key whose deployments the judged call's model picks is not judged", async () => {
    await azureKey('azure-judge-aliases', {
      deployments: [deployment('big', 'gpt4o'), deployment('small', 'gpt4o-mini')],
    });
    await ok(
      admin.post('/guardrails', {
        slug: 'aliased-judge',
        guardrail: {
          'default.modelJudge': { instructions: 'Is it polite?', virtual_key: 'azure-judge-aliases' },
        },
      }),
    );
    // The judge asks with the judged call's model: which alias it picks is not known here.
    await ok(
      admin.patch('/virtual-keys/azure-judge-aliases', {
        deployments: [deployment('big', 'gpt4o')],
      }),
    );
  });

  it("a semantic cache's embedding through the key is judged, with the cache's model", async () => {
    await azureKey('azure-embeddings', {
      deployments: [deployment('text-embedding-3-small', 'emb-small'), deployment('big', 'gpt4o')],
    });
    await ok(
      admin.post('/virtual-keys', {
        slug: 'openai-cached',
        provider: 'openai',
        api_key: 'sk-cached-0123456789',
        custom_host: openai.url,
      }),
    );
    const route = { virtual_key: 'openai-cached', override_params: { model: 'gpt-4o-mini' } };
    const cache = (embedding: Record<string, unknown>) => ({ cache: { mode: 'semantic', embedding } });
    const stored = async (slug: string, config: Record<string, unknown>) => {
      await ok(admin.post('/configs', { slug, config }));
    };
    await stored('cache-through-key', {
      ...route,
      ...cache({ virtual_key: 'azure-embeddings', model: 'text-embedding-3-small' }),
    });
    // A cache naming no model embeds with the settings' (text-embedding-3-small); a target inherits it.
    await stored('cache-default-model', {
      strategy: { mode: 'fallback' },
      ...cache({ virtual_key: 'azure-embeddings' }),
      targets: [route],
    });
    // A stored config setting no model embeds with the model the cache asks with.
    await stored('embeds-any', { virtual_key: 'azure-embeddings' });
    await stored('cache-through-config', {
      ...route,
      ...cache({ config: 'embeds-any', model: 'text-embedding-3-small' }),
    });
    // One whose model picks a deployment the change keeps is not named.
    await stored('cache-keeps', { ...route, ...cache({ virtual_key: 'azure-embeddings', model: 'big' }) });
    await ok(
      admin.post('/prompts', {
        slug: 'cached-prompt',
        string: template,
        parameters: { model: 'gpt-4o-mini' },
        config: { ...route, ...cache({ virtual_key: 'azure-embeddings', model: 'text-embedding-3-small' }) },
      }),
    );

    expect((await chatThrough('cache-through-key')).status).toBe(200);
    expect(azure.requests.at(-1)?.path).toBe('/openai/deployments/emb-small/embeddings');

    const onlyBig = { deployments: [deployment('big', 'gpt4o')] };
    const refused = await admin.patch('/virtual-keys/azure-embeddings', onlyBig);
    const error = expectError(refused, 409, 'conflict', 'deployments');
    expect(error.message).toContain('"cache-through-key" (config.cache.embedding.virtual_key)');
    expect(error.message).toContain('"cache-default-model" (config.cache.embedding.virtual_key)');
    expect(error.message).toContain('"cache-through-config" (config.cache.embedding.config)');
    expect(error.message).toContain('prompts "cached-prompt" (version 1)');
    expect(error.message).not.toContain('"embeds-any"');
    expect(error.message).not.toContain('cache-keeps');
    const { dependents } = refused.body.error as { dependents: { configs: unknown[] } };
    expect(dependents.configs).toContainEqual({
      slug: 'cache-through-key',
      param: 'config.cache.embedding.virtual_key',
      reason: expect.stringContaining('text-embedding-3-small'),
    });

    await ok(admin.patch('/virtual-keys/azure-embeddings?force=true', onlyBig));
    // Forced, the embedding fails before it is sent: each request is a cache miss the provider answers.
    const embeddings = azure.requests.length;
    const chats = openai.requests.length;
    await ok(
      call(
        gateway.url,
        gateway.adminKey,
        'POST',
        '/chat/completions',
        { model: 'client-model', messages: [{ role: 'user', content: 'another question' }] },
        { 'x-gateway-config': 'cache-through-key' },
      ),
    );
    expect(azure.requests.length).toBe(embeddings);
    expect(openai.requests.length).toBe(chats + 1);
  });

  it("a config's target is judged with each operation it built before, a prompt's with its own", async () => {
    const endpoint = {
      provider: 'azure-ai',
      api_key: 'azure-ai-key-0123456789',
      cloudd_endpoint_name: 'embedder',
      cloudd_region: 'eastus',
    };
    await ok(admin.post('/providers', { slug: 'azure-embedder', ...endpoint }));
    // Clients call a stored config on any endpoint: this one embeds.
    await ok(
      admin.post('/configs', {
        slug: 'embeds-serverless',
        config: { provider: '@azure-embedder', override_params: { model: 'cohere-embed-v3-english' } },
      }),
    );
    // A prompt only ever chats.
    await ok(
      admin.post('/prompts', {
        slug: 'chats-serverless',
        string: template,
        parameters: { model: 'mistral-large' },
        provider: '@azure-embedder',
      }),
    );

    // A managed deployment still scores chat (at /score), but offers no /embeddings.
    const managed = { cloudd_deployment_type: 'managed', api_key: endpoint.api_key };
    const refused = expectError(
      await admin.patch('/providers/azure-embedder', managed),
      409,
      'conflict',
      'cloudd_deployment_type',
    );
    expect(refused.message).toContain('configs "embeds-serverless" (config.provider)');
    expect(refused.message).toContain('/embeddings');
    // The prompt's chat calls still build: it is not named.
    expect(refused.message).not.toContain('chats-serverless');

    await ok(admin.patch('/providers/azure-embedder?force=true', managed));
    const embedded = await call(
      gateway.url,
      gateway.adminKey,
      'POST',
      '/embeddings',
      { model: 'client-model', input: 'hi' },
      { 'x-gateway-config': 'embeds-serverless' },
    );
    expectError(embedded, 400, 'unsupported_endpoint');
  });

  it('a Vertex AI key with a service account is judged too: no token is exchanged for it', async () => {
    // Google's own host (no custom_host, behind which a call needs no token): nothing is sent to it here.
    await ok(
      admin.post('/virtual-keys', {
        slug: 'vertex-account',
        provider: 'vertex-ai',
        cloudb_service_account_json: vertex.serviceAccount,
        cloudb_project_id: 'test-project',
        cloudb_region: 'europe-west4',
      }),
    );
    await ok(
      admin.post('/configs', {
        slug: 'vertex-route',
        config: { virtual_key: 'vertex-account', override_params: { model: 'gemini-2.5-pro' } },
      }),
    );
    const tokens = vertex.issuedTokens.length;

    // The project is where the secret goes: the account is sent again with its change.
    const noProject = { cloudb_project_id: null, cloudb_service_account_json: vertex.serviceAccount };
    const refused = expectError(
      await admin.patch('/virtual-keys/vertex-account', noProject),
      409,
      'conflict',
      'cloudb_project_id',
    );
    expect(refused.message).toContain('configs "vertex-route" (config.virtual_key)');
    // Judged without a token exchange: the service account's token endpoint (the fake's) was not asked.
    expect(vertex.issuedTokens.length).toBe(tokens);

    expect((await admin.patch('/virtual-keys/vertex-account?force=true', noProject)).status).toBe(200);
    expectError(await chatThrough('vertex-route'), 400, 'provider_config_error', 'cloudb_project_id');
  });
}

describe('credential settings under what names them (SQLite)', () => {
  settingsDependents(() => startGateway());
});

describeWithPostgres('credential settings under what names them (PostgreSQL)', () => {
  const schema = freshSchemaName('credential_settings');
  settingsDependents(() => startGateway({ postgres: { url: postgresUrl(), schema } }));
  afterAll(async () => {
    await dropSchema(schema);
  });
});
