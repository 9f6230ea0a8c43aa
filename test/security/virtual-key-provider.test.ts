/**
 * A virtual key carries its provider: a config node that names another `provider` beside `virtual_key` is
 * refused (400 `invalid_config` naming the node's `provider`), when the config is stored and when a call
 * runs under it, so the key's stored secret never reaches the other provider. Naming the key's own
 * provider stays valid.
 *
 * The other provider is `ollama`, whose default address is on loopback (127.0.0.1:11434). Where a secret
 * would go is seen, not inferred, without listening there (a fixed port that anything else on the
 * machine, ollama itself, may hold): every request the gateway's HTTP client (undici) creates is watched
 * on undici's diagnostics channel `undici:request:create`, with its origin and headers, before it connects.
 * So a request toward ollama's address is seen whether or not anything listens there, and so is the
 * stored secret in a request to any host.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call, client, expectError, type Client } from '../management/http.js';

const SECRET = 'sk-vk-openai-SECRET-0123456789';
const LOCAL_SECRET = 'sk-vk-local-SECRET-0123456789';
/** Where ollama is called when no custom_host is given (providers/openai-compatible/table.ts). */
const OLLAMA_ORIGIN = 'http://127.0.0.1:11434';

interface Created {
  origin: string;
  path: string;
  /** The request's headers as undici holds them (names and values), as JSON text. */
  headers: string;
}

const REQUEST_CREATED = 'undici:request:create';

/** Keeps each HTTP request undici creates in this process, from now until the returned function is called. */
function watchRequests(created: Created[]): () => void {
  const onCreate = (message: unknown) => {
    const { request } = message as {
      request: { origin: unknown; path: string; headers: unknown };
    };
    created.push({
      origin: new URL(String(request.origin)).origin,
      path: request.path,
      headers: JSON.stringify(request.headers),
    });
  };
  subscribe(REQUEST_CREATED, onCreate);
  return () => unsubscribe(REQUEST_CREATED, onCreate);
}

let gateway: TestGateway;
let fake: FakeUpstream;
let stopWatching: (() => void) | undefined;
const created: Created[] = [];
let admin: Client;

/**
 * Where requests went toward ollama's address, or with the remote key's secret anywhere but to the gateway
 * itself (the test's own calls to the gateway go through undici too).
 */
const sentAway = () =>
  created
    .filter(
      (request) =>
        request.origin === OLLAMA_ORIGIN ||
        (request.origin !== gateway.origin && request.headers.includes(SECRET)),
    )
    .map((request) => `${request.origin}${request.path}`);

beforeAll(async () => {
  stopWatching = watchRequests(created);
  fake = await startFakeOpenAI({ name: 'vk-home' });
  gateway = await startGateway();
  admin = client(gateway.url, gateway.adminKey);
  // Its home is OpenAI's own host; never called here.
  const remote = await admin.post('/virtual-keys', {
    slug: 'vk-openai',
    provider: 'openai',
    api_key: SECRET,
  });
  expect(remote.status, remote.text).toBe(200);
  const local = await admin.post('/virtual-keys', {
    slug: 'vk-local',
    provider: 'openai',
    api_key: LOCAL_SECRET,
    custom_host: fake.url,
  });
  expect(local.status, local.text).toBe(200);
});
afterAll(async () => {
  stopWatching?.();
  await gateway?.close();
  await fake?.close();
});

function sdk(headers: Record<string, string>): OpenAI {
  return new OpenAI({
    baseURL: gateway.url,
    apiKey: 'unused-by-config',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, ...headers },
  });
}

const batchLine = {
  custom_id: 'line-1',
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
};

const ask = (openai: OpenAI) =>
  openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });

async function expectRefused(promise: Promise<unknown>, param: string, code = 'invalid_config') {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  const apiError = error as InstanceType<typeof OpenAI.APIError>;
  expect(apiError.status, apiError.message).toBe(400);
  expect(apiError.code, apiError.message).toBe(code);
  expect(apiError.param).toBe(param);
  return apiError;
}

describe('a provider named beside a virtual key', () => {
  it('is refused in an inline config, at the root or in a target, and the secret goes nowhere', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ virtual_key: 'vk-openai', provider: 'ollama' }, 'config.provider'],
      [
        {
          strategy: { mode: 'fallback' },
          targets: [
            { virtual_key: 'vk-local', provider: 'openai' },
            { virtual_key: 'vk-openai', provider: 'ollama' },
          ],
        },
        'config.targets[1].provider',
      ],
    ];
    for (const [config, param] of cases) {
      // The first target of the fallback fails, so the call goes on to the second.
      if (config.targets) fake.enqueue({ status: 500 });
      const openai = sdk({ 'x-gateway-config': JSON.stringify(config) });
      const error = await expectRefused(ask(openai), param);
      expect(error.message).toContain('vk-openai');
      expect(error.message).toContain('openai');
    }
    // Headers say the same as a config.
    await expectRefused(
      ask(sdk({ 'x-gateway-virtual-key': 'vk-openai', 'x-gateway-provider': 'ollama' })),
      'x-gateway-provider',
      'invalid_header',
    );
    expect(sentAway()).toEqual([]);
  });

  it('is refused on every endpoint, before anything is sent', async () => {
    const config = JSON.stringify({ virtual_key: 'vk-openai', provider: 'ollama' });
    const openai = sdk({ 'x-gateway-config': config });
    await expectRefused(ask(openai), 'config.provider');
    await expectRefused(
      openai.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      }),
      'config.provider',
    );
    await expectRefused(openai.completions.create({ model: 'gpt-4o-mini', prompt: 'hi' }), 'config.provider');
    await expectRefused(
      openai.embeddings.create({ model: 'text-embedding-3-small', input: 'hi' }),
      'config.provider',
    );
    await expectRefused(openai.responses.create({ model: 'gpt-4o-mini', input: 'hi' }), 'config.provider');
    // Batches: the gateway's own file, run by the gateway (immediate) or sent to the provider (24h).
    const input = await sdk({}).files.create({
      file: await toFile(Buffer.from(`${JSON.stringify(batchLine)}\n`), 'lines.jsonl'),
      purpose: 'batch',
    });
    for (const window of ['immediate', '24h']) {
      await expectRefused(
        openai.batches.create({
          input_file_id: input.id,
          endpoint: '/v1/chat/completions',
          completion_window: window as '24h',
        }),
        'config.provider',
      );
    }
    for (const [path, body] of [
      ['/messages', { model: 'gpt-4o-mini', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }],
      ['/some/provider/path', { anything: true }],
    ] as const) {
      const reply = await call(gateway.url, gateway.adminKey, 'POST', path, body, {
        'x-gateway-config': config,
      });
      expect(reply.status, reply.text).toBe(400);
      // Messages answers in Anthropic's error shape, which has no param: its message names the field.
      if (path === '/messages') expect(reply.body.error.message).toMatch(/^config\.provider: /);
      else expectError(reply, 400, 'invalid_config', 'config.provider');
    }
    expect(sentAway()).toEqual([]);
  });

  it("is the key's own provider (an alias too): the call goes to the key's host with its secret", async () => {
    for (const provider of ['openai', 'OpenAI']) {
      const before = fake.requests.length;
      await ask(sdk({ 'x-gateway-config': JSON.stringify({ virtual_key: 'vk-local', provider }) }));
      expect(fake.requests.length).toBe(before + 1);
      expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${LOCAL_SECRET}`);
    }
    // The watch sees what the gateway sends, with its headers: the key's own secret, to the key's own host.
    const home = new URL(fake.url).origin;
    const withSecret = created.filter((request) => request.headers.includes(LOCAL_SECRET));
    expect(withSecret.length).toBeGreaterThanOrEqual(2);
    expect(withSecret.every((request) => request.origin === home)).toBe(true);
  });

  it('is refused when a config is stored, naming the node; the same provider is stored', async () => {
    expectError(
      await admin.post('/configs', {
        slug: 'elsewhere',
        config: { virtual_key: 'vk-openai', provider: 'ollama' },
      }),
      400,
      'invalid_config',
      'config.provider',
    );
    expectError(
      await admin.post('/configs', {
        slug: 'elsewhere',
        config: {
          strategy: { mode: 'loadbalance' },
          targets: [{ virtual_key: 'vk-openai', provider: 'ollama' }],
        },
      }),
      400,
      'invalid_config',
      'config.targets[0].provider',
    );
    const same = await admin.post('/configs', {
      slug: 'same-provider',
      config: { virtual_key: 'vk-local', provider: 'openai' },
    });
    expect(same.status, same.text).toBe(200);
    expectError(
      await admin.patch('/configs/same-provider', {
        config: { virtual_key: 'vk-openai', provider: 'ollama' },
      }),
      400,
      'invalid_config',
      'config.provider',
    );
    await ask(sdk({ 'x-gateway-config': 'same-provider' }));
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${LOCAL_SECRET}`);
  });

  it("is refused in a prompt version's config, and on a prompt completion's config", async () => {
    const template = JSON.stringify([{ role: 'user', content: 'hi' }]);
    const refused = await admin.post('/prompts', {
      slug: 'elsewhere-prompt',
      string: template,
      parameters: { model: 'gpt-4o-mini' },
      config: { virtual_key: 'vk-openai', provider: 'ollama' },
    });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.error.param).toMatch(/provider$/);
    const prompt = await admin.post('/prompts', {
      slug: 'home-prompt',
      string: template,
      parameters: { model: 'gpt-4o-mini' },
      virtual_key: 'vk-local',
    });
    expect(prompt.status, prompt.text).toBe(200);
    const reply = await call(
      gateway.url,
      gateway.adminKey,
      'POST',
      '/prompts/home-prompt/completions',
      { variables: {} },
      { 'x-gateway-config': JSON.stringify({ virtual_key: 'vk-openai', provider: 'ollama' }) },
    );
    expectError(reply, 400, 'invalid_config', 'config.provider');
    expect(sentAway()).toEqual([]);
  });

  it('is refused at call time in a config stored before the rule, and the secret goes nowhere', async () => {
    const workspace = gateway.server.bootstrap.workspace;
    await gateway.server.deps.store.createConfig({
      workspace_id: workspace.id,
      organisation_id: workspace.organisation_id,
      slug: 'stored-before',
      name: 'stored before',
      config: { strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'vk-openai', provider: 'ollama' }] },
    });
    await expectRefused(ask(sdk({ 'x-gateway-config': 'stored-before' })), 'config.targets[0].provider');
    expect(sentAway()).toEqual([]);
  });
});

describe('a host setting beside stored credentials', () => {
  const AZURE_SECRET = 'azure-SECRET-0123456789';

  beforeAll(async () => {
    // Both reach the fake through their stored custom_host, so nothing here leaves the machine.
    const azure = await admin.post('/virtual-keys', {
      slug: 'vk-azure',
      provider: 'azure-openai',
      api_key: AZURE_SECRET,
      resource_name: 'home-resource',
      deployment_id: 'gpt-4o-mini',
      api_version: '2024-10-21',
      custom_host: fake.url,
    });
    expect(azure.status, azure.text).toBe(200);
    const bedrock = await admin.post('/providers', {
      slug: 'bedrock-home',
      provider: 'bedrock',
      cloudc_access_key_id: 'AKIAHOMEKEY0',
      cloudc_secret_access_key: 'bedrock-SECRET-0123456789',
      cloudc_region: 'us-east-1',
      custom_host: fake.url,
    });
    expect(bedrock.status, bedrock.text).toBe(200);
  });

  const sentSecret = () =>
    fake.requests.filter((request) => JSON.stringify(request.headers).includes('SECRET')).length;

  it('must be the one stored with them when a call runs, else nothing is sent', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ virtual_key: 'vk-azure', resource_name: 'someone-elses' }, 'config.resource_name'],
      [{ virtual_key: 'vk-azure', cloudd_resource_name: 'someone-elses' }, 'config.cloudd_resource_name'],
      [{ virtual_key: 'vk-azure', cloudd_region: 'westus' }, 'config.cloudd_region'],
      [
        {
          strategy: { mode: 'single' },
          targets: [{ virtual_key: 'vk-azure', resource_name: 'someone-elses' }],
        },
        'config.targets[0].resource_name',
      ],
    ];
    const before = sentSecret();
    for (const [config, param] of cases) {
      const error = await expectRefused(ask(sdk({ 'x-gateway-config': JSON.stringify(config) })), param);
      expect(error.message).toContain('stored');
    }
    expect(sentSecret()).toBe(before);
    // The stored value itself changes nothing, and is sent.
    await ask(
      sdk({
        'x-gateway-config': JSON.stringify({ virtual_key: 'vk-azure', resource_name: 'home-resource' }),
      }),
    ).catch(() => undefined);
    expect(fake.requests.at(-1)?.headers['api-key']).toBe(AZURE_SECRET);
  });

  it('must be the one stored with them when a config is stored', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ virtual_key: 'vk-azure', resource_name: 'someone-elses' }, 'config.resource_name'],
      [{ virtual_key: 'vk-local', custom_host: 'http://127.0.0.1:9/v1' }, 'config.custom_host'],
      [{ virtual_key: 'vk-azure', cloudd_endpoint_name: 'someone-elses' }, 'config.cloudd_endpoint_name'],
      [
        {
          strategy: { mode: 'fallback' },
          targets: [{ virtual_key: 'vk-local', custom_host: 'http://127.0.0.1:9/v1' }],
        },
        'config.targets[0].custom_host',
      ],
    ];
    for (const [config, param] of cases) {
      expectError(await admin.post('/configs', { slug: 'moved-host', config }), 400, 'invalid_config', param);
    }
    const same = await admin.post('/configs', {
      slug: 'same-host',
      config: { virtual_key: 'vk-local', custom_host: fake.url },
    });
    expect(same.status, same.text).toBe(200);
  });

  it("may choose a Bedrock or Vertex AI region beside one: those are only AWS's and Google's own hosts", async () => {
    // One stored AWS key serving another region (a fallback from one region to the next, say).
    const regional = await admin.post('/configs', {
      slug: 'other-region',
      config: { provider: '@bedrock-home', cloudc_region: 'eu-west-1' },
    });
    expect(regional.status, regional.text).toBe(200);
    const sent = fake.requests.length;
    await ask(
      sdk({ 'x-gateway-config': JSON.stringify({ provider: '@bedrock-home', cloudc_region: 'eu-west-1' }) }),
    ).catch(() => undefined);
    // Sent (to the stored host: custom_host wins over the region), signed with the stored key.
    expect(fake.requests.length).toBe(sent + 1);
    expect(String(fake.requests.at(-1)?.headers.authorization)).toContain('AKIAHOMEKEY0');
  });
});
