/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// What a client gets when a native provider cannot be called as asked: credentials the provider refuses
// (its own 4xx kept, never a gateway 5xx), a target missing a key or naming an unknown region or
// deployment, a parameter the provider cannot honour, an endpoint it does not have. Every answer is a
// 4xx whose body is an OpenAI ErrorResponse naming what is wrong.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import {
  PROVIDER_CASE_NAMES,
  startProviderFakes,
  type ProviderCase,
  type ProviderCaseName,
  type ProviderFakes,
} from '../helpers/provider-targets.js';

let gateway: TestGateway;
let providers: ProviderFakes;

beforeAll(async () => {
  [gateway, providers] = await Promise.all([startGateway(), startProviderFakes()]);
});

afterAll(async () => {
  await gateway?.close();
  await providers?.close();
});

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** Posts with fetch, without an Authorization header unless one is given, and reads the whole body. */
async function post(
  path: string,
  config: Record<string, unknown>,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await postWithConfig(gateway, path, config, body, headers);
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // kept as text: the assertions below then say what arrived
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

const chat = (c: ProviderCase, extra: Record<string, unknown> = {}) => ({
  model: c.model,
  messages: [{ role: 'user', content: 'Hello' }],
  ...extra,
});

function expectClientError(answer: Answer, status: number): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expectOpenAPIValid('ErrorResponse', answer.body);
}

describe.each(PROVIDER_CASE_NAMES)('%s: credentials the provider refuses', (name) => {
  it.each([false, true])("keep the provider's own status (stream: %s)", async (stream) => {
    const c = providers.byName(name);
    const answer = await post(
      '/chat/completions',
      { provider: c.provider, ...c.wrongKeys },
      chat(c, { stream }),
    );
    expectClientError(answer, c.wrongKeysStatus);
    expect(answer.headers.get('x-gateway-error-source')).toBe('provider');
    const secret = c.wrongKeys.api_key ?? c.wrongKeys.cloudc_secret_access_key;
    if (typeof secret === 'string') expect(JSON.stringify(answer.body)).not.toContain(secret);
  });
});

describe('no key at all, for a provider behind a custom_host', () => {
  it.each(['anthropic', 'google', 'cohere', 'azure-openai', 'azure-ai'] as const)(
    "%s: the call goes out without one and the provider's own refusal is kept",
    async (name) => {
      const c = providers.byName(name);
      const answer = await post(
        '/chat/completions',
        { provider: c.provider, ...c.keys, api_key: undefined },
        chat(c),
      );
      expect([401, 403]).toContain(answer.status);
      expectOpenAPIValid('ErrorResponse', answer.body);
      expect(answer.headers.get('x-gateway-error-source')).toBe('provider');
    },
  );
});

describe('a target missing a key, or naming an unknown region or deployment', () => {
  const cases: ReadonlyArray<
    readonly [ProviderCaseName, string, (c: ProviderCase) => Record<string, unknown>, string]
  > = [
    ['bedrock', 'an unknown region', (c) => ({ ...c.keys, cloudc_region: 'moon' }), 'cloudc_region'],
    [
      'bedrock',
      'no access key id',
      (c) => ({ ...c.keys, cloudc_access_key_id: undefined }),
      'cloudc_access_key_id',
    ],
    [
      'bedrock',
      'no secret access key',
      (c) => ({ ...c.keys, cloudc_secret_access_key: undefined }),
      'cloudc_secret_access_key',
    ],
    [
      'vertex-ai (gemini)',
      'an unknown region',
      (c) => ({ ...c.keys, cloudb_region: 'moon base' }),
      'cloudb_region',
    ],
    [
      'vertex-ai (claude)',
      'an unknown region',
      (c) => ({ ...c.keys, cloudb_region: 'europe_west4' }),
      'cloudb_region',
    ],
    [
      'vertex-ai (gemini)',
      'no project',
      (c) => ({ ...c.keys, cloudb_project_id: undefined }),
      'cloudb_project_id',
    ],
    [
      'vertex-ai (claude)',
      'neither a service account nor a token (and no custom_host)',
      (c) => ({ ...c.keys, cloudb_service_account_json: undefined, custom_host: undefined }),
      'cloudb_service_account_json',
    ],
    [
      'azure-openai',
      'no resource name (and no custom_host)',
      (c) => ({ ...c.keys, custom_host: undefined }),
      'cloudd_resource_name',
    ],
    [
      'azure-openai',
      'a model matching no deployment alias and no default',
      (c) => ({
        ...c.keys,
        cloudd_deployment_name: undefined,
        deployments: [
          { alias: 'gpt-4o-mini', deployment_id: 'gpt4o-mini', api_version: '2024-10-21' },
          { alias: 'o3', deployment_id: 'o3', api_version: '2024-12-01-preview' },
        ],
      }),
      'model',
    ],
    [
      'azure-openai',
      'no api version',
      (c) => ({ ...c.keys, cloudd_api_version: undefined }),
      'cloudd_api_version',
    ],
    [
      'azure-ai',
      'no endpoint name (and no custom_host)',
      (c) => ({ ...c.keys, custom_host: undefined, cloudd_endpoint_name: undefined }),
      'cloudd_endpoint_name',
    ],
    [
      'azure-ai',
      'no region (and no custom_host)',
      (c) => ({ ...c.keys, custom_host: undefined, cloudd_region: undefined }),
      'cloudd_region',
    ],
    // without custom_host: a self-hosted endpoint behind one may need no key
    ...(['anthropic', 'google', 'cohere', 'azure-openai', 'azure-ai'] as const).map(
      (name) =>
        [
          name,
          'no api key (and no custom_host)',
          (c: ProviderCase) => ({ ...c.keys, api_key: undefined, custom_host: undefined }),
          'api_key',
        ] as const,
    ),
  ];

  it.each(cases)('%s with %s: 400 naming it, and no call', async (name, _what, keysFor, key) => {
    const c = providers.byName(name);
    const before = c.calls();
    const answer = await post('/chat/completions', { provider: c.provider, ...keysFor(c) }, chat(c));
    expectClientError(answer, 400);
    expect(answer.body.error.param).toMatch(new RegExp(`(^|\\.)${key}$`));
    expect(c.calls()).toBe(before);
  });
});

describe('a parameter the provider cannot honour', () => {
  const refusing = [
    'anthropic',
    'google',
    'vertex-ai (gemini)',
    'vertex-ai (claude)',
    'bedrock',
    'cohere',
  ] as const;

  it.each(refusing)('%s refuses logit_bias with a 400 naming it, and no call', async (name) => {
    const c = providers.byName(name);
    const before = c.calls();
    const answer = await post(
      '/chat/completions',
      { provider: c.provider, ...c.keys },
      chat(c, { logit_bias: { '50256': -100 } }),
    );
    expectClientError(answer, 400);
    expect(answer.body.error.param).toBe('logit_bias');
    expect(c.calls()).toBe(before);
  });

  it.each(refusing)('%s refuses it in a stream too, before the stream starts', async (name) => {
    const c = providers.byName(name);
    const answer = await post(
      '/chat/completions',
      { provider: c.provider, ...c.keys },
      chat(c, { stream: true, logit_bias: { '50256': -100 } }),
    );
    expectClientError(answer, 400);
    expect(answer.body.error.param).toBe('logit_bias');
  });
});

describe('an endpoint the provider does not have', () => {
  it('anthropic refuses embeddings with a 400, and no call', async () => {
    const c = providers.byName('anthropic');
    const before = c.calls();
    const answer = await post(
      '/embeddings',
      { provider: c.provider, ...c.keys },
      { model: 'claude-sonnet-4-5', input: 'hi' },
    );
    expectClientError(answer, 400);
    expect(answer.body.error.message).toMatch(/anthropic/i);
    expect(c.calls()).toBe(before);
  });

  it('anthropic refuses text completions with a 400', async () => {
    const c = providers.byName('anthropic');
    const answer = await post(
      '/completions',
      { provider: c.provider, ...c.keys },
      { model: 'claude-sonnet-4-5', prompt: 'hi' },
    );
    expectClientError(answer, 400);
  });
});
