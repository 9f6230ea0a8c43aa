// Every native provider reached four ways with the same credentials: inline in x-gateway-config, as a
// virtual key, as a model-catalog @slug, and through a stored config naming the virtual key. Each time the
// plain answer comes back and the fake's record shows that those credentials, and no others, reached it.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import {
  PROVIDER_CASE_NAMES,
  startProviderFakes,
  type ProviderCase,
  type ProviderFakes,
} from '../helpers/provider-targets.js';

let gateway: TestGateway;
let providers: ProviderFakes;
/** Per case: the virtual key's slug, the catalog slug and the stored config's id. */
const stored = new Map<string, { virtualKey: string; catalog: string; configId: string }>();

const slugOf = (name: string) => name.replace(/[^a-z0-9]+/g, '-').replace(/-$/, '');

beforeAll(async () => {
  [gateway, providers] = await Promise.all([startGateway(), startProviderFakes()]);
  const store = gateway.server.deps.store;
  const { workspace } = gateway.server.bootstrap;
  const owner = { workspace_id: workspace.id, organisation_id: workspace.organisation_id };
  for (const c of providers.cases) {
    const slug = slugOf(c.name);
    const common = { ...owner, name: c.name, provider: c.provider, secret: c.keys };
    await store.createCredential({ ...common, kind: 'virtual_key', slug: `vk-${slug}` });
    await store.createCredential({ ...common, kind: 'provider', slug: `cat-${slug}` });
    const config = await store.createConfig({
      ...owner,
      slug: `cfg-${slug}`,
      name: `${c.name} through its virtual key`,
      config: { virtual_key: `vk-${slug}` },
    });
    stored.set(c.name, { virtualKey: `vk-${slug}`, catalog: `cat-${slug}`, configId: config.id });
  }
});

afterAll(async () => {
  await gateway?.close();
  await providers?.close();
});

function sdk(headers: Record<string, string>): OpenAI {
  return new OpenAI({
    baseURL: gateway.url,
    // SDKs always send Authorization; stored credentials must win over it
    apiKey: 'sk-client-bearer-not-for-providers',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, ...headers },
  });
}

const WAYS: Array<[string, (c: ProviderCase) => Record<string, string>]> = [
  [
    'inline in x-gateway-config',
    (c) => ({ 'x-gateway-config': JSON.stringify({ provider: c.provider, ...c.keys }) }),
  ],
  ['as a virtual key', (c) => ({ 'x-gateway-virtual-key': stored.get(c.name)!.virtualKey })],
  ['as a model-catalog @slug', (c) => ({ 'x-gateway-provider': `@${stored.get(c.name)!.catalog}` })],
  [
    'through a stored config naming the virtual key',
    (c) => ({ 'x-gateway-config': stored.get(c.name)!.configId }),
  ],
];

describe.each(PROVIDER_CASE_NAMES)('%s credentials', (name) => {
  it.each(WAYS)('answers with the credentials given %s', async (_way, headersFor) => {
    const c = providers.byName(name);
    const before = c.calls();
    const prompt = 'What is the capital of France?';
    const { data: completion, response } = await sdk(headersFor(c))
      .chat.completions.create({ model: c.model, messages: [{ role: 'user', content: prompt }] })
      .withResponse();
    expectOpenAPIValid('CreateChatCompletionResponse', completion);
    expect(completion.choices[0]!.message.content).toBe(c.answerText(prompt));
    expect(response.headers.get('x-gateway-provider')).toBe(c.provider);
    expect(c.calls()).toBe(before + 1);
    c.expectCredentialsReached();
  });
});
