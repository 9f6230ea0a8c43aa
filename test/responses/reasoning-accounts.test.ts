/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// Encrypted reasoning goes back only to the provider account that produced it: OpenAI refuses reasoning
// another organisation encrypted, Azure OpenAI reasoning from OpenAI. A conversation moves from OpenAI
// account A to Azure OpenAI (or to OpenAI account B) and back to A: the other account never sees A's
// encrypted reasoning, and A gets it again. The openai SDK against the gateway and fakes of OpenAI and
// Azure OpenAI that answer with encrypted reasoning.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAzure, type FakeAzure } from '../fakes/azure/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

let gateway: TestGateway;
let openai: FakeUpstream;
let azure: FakeAzure;

beforeAll(async () => {
  [gateway, openai, azure] = await Promise.all([
    startGateway(),
    startFakeOpenAI({ name: 'oai' }),
    startFakeAzure({ deployments: ['gpt5-dep'] }),
  ]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), openai?.close(), azure?.close()]);
});

beforeEach(() => openai.reset());

const accountA = () => ({ provider: 'openai', api_key: 'sk-account-a', custom_host: openai.url });
const accountB = () => ({ provider: 'openai', api_key: 'sk-account-b', custom_host: openai.url });
const azureTarget = () => ({
  provider: 'azure-openai',
  api_key: azure.apiKey,
  custom_host: azure.url,
  cloudd_deployment_name: 'gpt5-dep',
  api_version: '2025-04-01-preview',
});

const ask = (input: string, previous?: string) => ({
  model: 'gpt-5',
  input,
  reasoning: { effort: 'low' as const },
  ...(previous ? { previous_response_id: previous } : {}),
});

const encryptedIn = (body: unknown): string[] =>
  ((body as any).input as any[])
    .filter((item) => item.type === 'reasoning')
    .map((item) => item.encrypted_content);

const lastOpenAIBody = () => openai.requests.at(-1)!.body;

async function firstTurnOnA(): Promise<{ id: string; encrypted: string }> {
  const first = await gatewayOpenAI(gateway, accountA()).responses.create(ask('First question'));
  expectOpenAPIValid('Response', first);
  const reasoning = first.output.find((item) => item.type === 'reasoning') as any;
  expect(reasoning.encrypted_content).toMatch(/^gAAAAAB/);
  return { id: first.id, encrypted: reasoning.encrypted_content };
}

describe('encrypted reasoning is sent only to the account that produced it', () => {
  it('OpenAI account A → Azure OpenAI → A: Azure never gets it, A gets it back', async () => {
    const first = await firstTurnOnA();

    const second = await gatewayOpenAI(gateway, azureTarget()).responses.create(
      ask('Second question', first.id),
    );
    expect(second.status).toBe('completed');
    const toAzure = azure.requests.at(-1)!.body as any;
    expect(JSON.stringify(toAzure)).not.toContain(first.encrypted);
    expect(encryptedIn(toAzure)).toEqual([]);
    // The rest of the conversation goes whole.
    expect(toAzure.input.filter((item: any) => item.type !== 'reasoning')).toHaveLength(3);

    const third = await gatewayOpenAI(gateway, accountA()).responses.create(ask('Third question', second.id));
    expect(third.status).toBe('completed');
    // A gets its own reasoning back, and not the reasoning Azure produced on the second turn.
    expect(encryptedIn(lastOpenAIBody())).toEqual([first.encrypted]);
  });

  it('OpenAI account A → account B → A: B never gets it, A gets it back', async () => {
    const first = await firstTurnOnA();

    const second = await gatewayOpenAI(gateway, accountB()).responses.create(
      ask('Second question', first.id),
    );
    expect(second.status).toBe('completed');
    const toB = lastOpenAIBody();
    expect(openai.requests.at(-1)!.headers.authorization).toBe('Bearer sk-account-b');
    expect(JSON.stringify(toB)).not.toContain(first.encrypted);
    const secondReasoning = second.output.find((item) => item.type === 'reasoning') as any;

    await gatewayOpenAI(gateway, accountA()).responses.create(ask('Third question', second.id));
    const toA = lastOpenAIBody();
    expect(encryptedIn(toA)).toEqual([first.encrypted]);
    if (secondReasoning) expect(JSON.stringify(toA)).not.toContain(secondReasoning.encrypted_content);
  });

  it('follows the item when the client sends it back itself, without previous_response_id', async () => {
    const client = gatewayOpenAI(gateway, accountA());
    const first = await client.responses.create(ask('First question'));
    const input = [
      { role: 'user' as const, content: 'First question' },
      ...(first.output as any[]),
      { role: 'user' as const, content: 'Second question' },
    ];
    await gatewayOpenAI(gateway, accountB()).responses.create({
      model: 'gpt-5',
      input,
      reasoning: { effort: 'low' },
    });
    expect(encryptedIn(lastOpenAIBody())).toEqual([]);
    await client.responses.create({ model: 'gpt-5', input, reasoning: { effort: 'low' } });
    expect(encryptedIn(lastOpenAIBody())).toHaveLength(1);
  });
});
