/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// An input_file given by file_url on translated targets: the gateway never fetches it (a URL fetched
// server-side could reach the gateway's own network); the URL goes to a provider that fetches files itself
// (Claude: a document of source url; Gemini and Vertex AI: fileData), and every other provider refuses it
// with a 400 naming the part (`input[0].content[1].file_url`), before any call. The openai SDK against the gateway and the fakes.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';
import {
  startProviderFakes,
  type ProviderCaseName,
  type ProviderFakes,
} from '../helpers/provider-targets.js';

let gateway: TestGateway;
let providers: ProviderFakes;
let compatible: FakeUpstream;

beforeAll(async () => {
  [gateway, providers, compatible] = await Promise.all([
    startGateway(),
    startProviderFakes(),
    startFakeOpenAI({ name: 'compat' }),
  ]);
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([providers?.close(), compatible?.close()]);
});

const sdk = (config: Record<string, unknown>): OpenAI => gatewayOpenAI(gateway, config);

const URL_OF_PDF = 'https://example.com/letters/2024ltr.pdf';
const input = (fileUrl: string) => [
  {
    role: 'user' as const,
    content: [
      { type: 'input_text' as const, text: 'What is in this file?' },
      { type: 'input_file' as const, file_url: fileUrl },
    ],
  },
];

function caseOf(name: ProviderCaseName) {
  const c = providers.byName(name);
  return { client: sdk({ provider: c.provider, ...c.keys }), model: c.model };
}

describe('an input_file by file_url on a translated target', () => {
  it('reaches Claude as a document of source url', async () => {
    const { client, model } = caseOf('anthropic');
    const response = await client.responses.create({ model, input: input(URL_OF_PDF) });
    expect(response.status).toBe('completed');
    const sent = providers.anthropic.requests.at(-1)!.body as any;
    expect(sent.messages[0].content[1]).toEqual({
      type: 'document',
      source: { type: 'url', url: URL_OF_PDF },
    });
  });

  it.each(['google', 'vertex-ai (gemini)'] as const)('reaches %s as fileData', async (name) => {
    const { client, model } = caseOf(name);
    const response = await client.responses.create({ model, input: input(URL_OF_PDF) });
    expect(response.status).toBe('completed');
    const fake = name === 'google' ? providers.google : providers.vertex;
    const sent = fake.requests.at(-1)!.body as any;
    expect(sent.contents[0].parts[1]).toEqual({
      fileData: { mimeType: 'application/pdf', fileUri: URL_OF_PDF },
    });
  });

  it('is refused by Claude when not an http(s) URL, naming file_url', async () => {
    const { client, model } = caseOf('anthropic');
    const calls = providers.anthropic.requests.length;
    const error: any = await client.responses
      .create({ model, input: input('file:///etc/passwd') })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe('input[0].content[1].file_url');
    expect(error.message).toContain('input[0].content[1].file_url');
    expect(providers.anthropic.requests.length).toBe(calls);
  });

  it.each([
    [
      'an OpenAI-wire chat provider',
      () => ({ provider: 'groq', api_key: 'gsk', custom_host: compatible.url }),
    ],
    ['bedrock', () => ({ provider: 'bedrock', ...providers.byName('bedrock').keys })],
    ['cohere', () => ({ provider: 'cohere', ...providers.byName('cohere').keys })],
  ] as const)('is refused by %s with a 400 naming the part, before any call', async (_, config) => {
    const before =
      compatible.requests.length + providers.bedrock.requests.length + providers.cohere.requests.length;
    const error: any = await sdk(config())
      .responses.create({ model: 'some-model', input: input(URL_OF_PDF) })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    // The part by its path in the client's input (its file_url; Cohere refuses the part's type).
    expect(error.param).toMatch(/^input\[0\]\.content\[1\]\.(file_url|type)$/);
    expect(error.message).toContain(error.param);
    // Cohere takes no file part at all, and says so.
    expect(error.message).toMatch(/file_url|type `file`/);
    const after =
      compatible.requests.length + providers.bedrock.requests.length + providers.cohere.requests.length;
    expect(after).toBe(before);
  });
});
