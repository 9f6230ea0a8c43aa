/**
 * One entry per native provider, for suites that run the same scenario against all of them: how its fake
 * is reached (the config keys with working credentials, and with credentials the fake refuses), a model,
 * the text of its plain answer, and how to make it fail — its own error shape with a status, an error
 * event inside a 200 stream before any content, or after some. The fakes are started once, together.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { readAnthropicJsonFixture } from '../fakes/anthropic/fixtures.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startFakeAzure, type FakeAzure } from '../fakes/azure/server.js';
import { readBedrockJsonFixture } from '../fakes/bedrock/fixtures.js';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/server.js';
import { readCohereJson } from '../fakes/cohere/fixtures.js';
import { startFakeCohere, type FakeCohere } from '../fakes/cohere/server.js';
import { readGoogleFixture } from '../fakes/google/fixtures.js';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google/server.js';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-ai/server.js';

export type ProviderKeys = Record<string, unknown>;

export interface ProviderCase {
  /** Label for test names, e.g. `vertex-ai (claude)`. */
  name: ProviderCaseName;
  /** The adapter id, as `provider` in a config. */
  provider: string;
  model: string;
  /** Credentials and addressing that reach the fake (without `provider`). */
  keys: ProviderKeys;
  /** The same with credentials the fake refuses. */
  wrongKeys: ProviderKeys;
  /** The status the provider itself answers those with. */
  wrongKeysStatus: number;
  /** The content of the fake's plain (non-streamed) answer to `prompt`. */
  answerText(prompt: string): string;
  /** The next call gets a 200 stream whose first event is the provider's error event. */
  failStreamBeforeContent(): void;
  /** The next call gets a 200 stream that fails after its role-only opening, before any text; absent
   * when the provider's first event already carries text (Gemini). */
  failStreamAfterRole?(): void;
  /** The next call (to `prompt`) gets a 200 stream with some text, then the provider's error event.
   * Returns the text sent before the error. */
  failStreamAfterContent(prompt: string): string;
  /** The next call is answered with this status in the provider's own error shape. */
  failWithStatus(status: 429 | 500 | 503): void;
  /** Model calls the fake received (authorised or not). */
  calls(): number;
  /** Asserts that the last model call carried the credentials of `keys`. */
  expectCredentialsReached(): void;
}

/** The entries of the table, in order: known before the fakes start, for `describe.each`. */
export const PROVIDER_CASE_NAMES = [
  'anthropic',
  'google',
  'vertex-ai (gemini)',
  'vertex-ai (claude)',
  'bedrock',
  'azure-openai',
  'azure-ai',
  'cohere',
] as const;

export type ProviderCaseName = (typeof PROVIDER_CASE_NAMES)[number];

export interface ProviderFakes {
  anthropic: FakeAnthropic;
  google: FakeGoogle;
  vertex: FakeVertex;
  bedrock: FakeBedrock;
  azure: FakeAzure;
  cohere: FakeCohere;
  cases: ProviderCase[];
  /** The entry of that name. */
  byName(name: ProviderCaseName): ProviderCase;
  close(): Promise<void>;
}

const ANTHROPIC_KEY = 'sk-ant-matrix';
const COHERE_KEY = 'co-matrix-key';
const AZURE_KEY = 'azure-matrix-key';
const BEDROCK = {
  accessKeyId: 'AKIDMATRIX',
  secretAccessKey: 'matrix-secret',
  sessionToken: 'matrix-session',
  region: 'eu-west-1',
};

const header = (headers: IncomingHttpHeaders | Record<string, string>, name: string) => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

function anthropicText(): string {
  return (readAnthropicJsonFixture('anthropic-text.json') as { content: Array<{ text: string }> }).content[0]!
    .text;
}

function geminiText(): string {
  const fixture = readGoogleFixture('google-text.json') as {
    candidates: Array<{ content: { parts: Array<{ text?: string; thought?: boolean }> } }>;
  };
  return fixture.candidates[0]!.content.parts.flatMap((p) => (p.thought ? [] : [p.text ?? ''])).join('');
}

/**
 * A vertex-ai target on the Vertex fake: its test project, region europe-west4 and the service account it
 * trusts; `extra` adds to it or replaces.
 */
export function vertexTarget(fake: FakeVertex, extra: ProviderKeys = {}): ProviderKeys {
  return { provider: 'vertex-ai', ...vertexKeys(fake), ...extra };
}

/** What reaches the Vertex fake, or a relay in front of it at `host`, without `provider`. */
function vertexKeys(fake: FakeVertex, host = fake.url): ProviderKeys {
  return {
    cloudb_project_id: 'test-project',
    cloudb_region: 'europe-west4',
    cloudb_service_account_json: fake.serviceAccount,
    custom_host: host,
  };
}

/** The text of the first two content deltas of the recorded anthropic-text stream. */
const ANTHROPIC_PARTIAL = 'Hello! I';

export async function startProviderFakes(): Promise<ProviderFakes> {
  const [anthropic, google, vertex, bedrock, azure, cohere] = await Promise.all([
    startFakeAnthropic({ apiKey: ANTHROPIC_KEY }),
    startFakeGoogle(),
    startFakeVertex(),
    startFakeBedrock(BEDROCK),
    startFakeAzure({ apiKey: AZURE_KEY, deployments: ['gpt4o'] }),
    startFakeCohere({ apiKey: COHERE_KEY }),
  ]);
  const vertexClaude = await startAnthropicStreamFaults(vertex.url);

  // A service account the fake's token endpoint does not trust: same account, another private key.
  const untrustedAccount = {
    ...vertex.serviceAccount,
    private_key: generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString(),
  };
  const expectVertexToken = () => {
    const sent = header(vertex.requests.at(-1)!.headers, 'authorization');
    expect(vertex.issuedTokens.map((token) => `Bearer ${token}`)).toContain(sent);
  };
  const azureAnswer = (prompt: string) => `[azure] ${prompt}`;
  const azurePartial = (prompt: string) => {
    // the prompt-filter event, the role chunk, then one word (with its leading space) per chunk
    azure.enqueue({ streamErrorAfter: 4 });
    return `[azure] ${prompt.split(' ')[0]}`;
  };

  const cases: ProviderCase[] = [
    {
      name: 'anthropic',
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      keys: { api_key: ANTHROPIC_KEY, custom_host: anthropic.url },
      wrongKeys: { api_key: 'sk-ant-wrong', custom_host: anthropic.url },
      wrongKeysStatus: 401,
      answerText: anthropicText,
      failStreamBeforeContent: () =>
        anthropic.enqueue({
          kind: 'stream',
          fixture: 'anthropic-text.chunks.txt',
          error: { type: 'overloaded_error', message: 'Overloaded', afterEvents: 0 },
        }),
      failStreamAfterRole: () =>
        // message_start, content_block_start, ping
        anthropic.enqueue({
          kind: 'stream',
          fixture: 'anthropic-text.chunks.txt',
          error: { type: 'overloaded_error', message: 'Overloaded', afterEvents: 3 },
        }),
      failStreamAfterContent: () => {
        // message_start, content_block_start, ping, "Hello", "! I"
        anthropic.enqueue({
          kind: 'stream',
          fixture: 'anthropic-text.chunks.txt',
          error: { type: 'overloaded_error', message: 'Overloaded', afterEvents: 5 },
        });
        return ANTHROPIC_PARTIAL;
      },
      failWithStatus: (status) =>
        anthropic.enqueue({
          kind: 'error',
          status,
          type: status === 429 ? 'rate_limit_error' : 'api_error',
          message: `fake anthropic failure ${status}`,
        }),
      // the fake records only the calls that passed its key check
      calls: () => anthropic.requests.length,
      expectCredentialsReached: () => {
        expect(anthropic.requests.at(-1)!.headers['x-api-key']).toBe(ANTHROPIC_KEY);
      },
    },
    {
      name: 'google',
      provider: 'google',
      model: 'gemini-2.5-flash',
      keys: { api_key: google.apiKey, custom_host: google.url },
      wrongKeys: { api_key: 'AIza-wrong', custom_host: google.url },
      // Google answers a key it does not know with 400 API_KEY_INVALID, not 401
      wrongKeysStatus: 400,
      answerText: geminiText,
      failStreamBeforeContent: () => google.enqueue({ streamErrorAfter: 0 }),
      failStreamAfterContent: () => {
        google.enqueue({ streamErrorAfter: 1 });
        return 'There are **3**';
      },
      failWithStatus: (status) => google.enqueue({ status }),
      calls: () => google.requests.length,
      expectCredentialsReached: () => {
        expect(header(google.requests.at(-1)!.headers, 'x-goog-api-key')).toBe(google.apiKey);
      },
    },
    {
      name: 'vertex-ai (gemini)',
      provider: 'vertex-ai',
      model: 'gemini-2.5-pro',
      keys: vertexKeys(vertex),
      wrongKeys: { ...vertexKeys(vertex), cloudb_service_account_json: untrustedAccount },
      wrongKeysStatus: 401,
      answerText: geminiText,
      failStreamBeforeContent: () => vertex.enqueue({ streamErrorAfter: 0 }),
      failStreamAfterContent: () => {
        vertex.enqueue({ streamErrorAfter: 1 });
        return 'There are **3**';
      },
      failWithStatus: (status) => vertex.enqueue({ status }),
      calls: () => vertex.requests.length,
      expectCredentialsReached: expectVertexToken,
    },
    {
      name: 'vertex-ai (claude)',
      provider: 'vertex-ai',
      model: 'claude-sonnet-4-5',
      keys: vertexKeys(vertex, vertexClaude.url),
      wrongKeys: { ...vertexKeys(vertex, vertexClaude.url), cloudb_service_account_json: untrustedAccount },
      wrongKeysStatus: 401,
      answerText: anthropicText,
      failStreamBeforeContent: () => vertexClaude.failNextStream(0),
      failStreamAfterRole: () => vertexClaude.failNextStream(3),
      failStreamAfterContent: () => {
        vertexClaude.failNextStream(5);
        return ANTHROPIC_PARTIAL;
      },
      failWithStatus: (status) =>
        vertex.enqueue({
          anthropicError: {
            status,
            type: status === 429 ? 'rate_limit_error' : 'api_error',
            message: `fake vertex claude failure ${status}`,
          },
        }),
      calls: () => vertex.requests.length,
      expectCredentialsReached: expectVertexToken,
    },
    {
      name: 'bedrock',
      provider: 'bedrock',
      model: 'anthropic.claude-3-5-haiku-20241022-v1:0',
      keys: {
        cloudc_region: BEDROCK.region,
        cloudc_access_key_id: BEDROCK.accessKeyId,
        cloudc_secret_access_key: BEDROCK.secretAccessKey,
        cloudc_session_token: BEDROCK.sessionToken,
        custom_host: bedrock.url,
      },
      wrongKeys: {
        cloudc_region: BEDROCK.region,
        cloudc_access_key_id: BEDROCK.accessKeyId,
        cloudc_secret_access_key: 'not-the-secret',
        cloudc_session_token: BEDROCK.sessionToken,
        custom_host: bedrock.url,
      },
      wrongKeysStatus: 403,
      answerText: () =>
        (
          readBedrockJsonFixture('amazon-bedrock-text.json') as {
            output: { message: { content: Array<{ text: string }> } };
          }
        ).output.message.content[0]!.text,
      failStreamBeforeContent: () =>
        bedrock.enqueue({
          kind: 'stream',
          fixture: 'amazon-bedrock-text.chunks.txt',
          exception: {
            type: 'serviceUnavailableException',
            message: 'Bedrock is unavailable',
            afterEvents: 0,
          },
        }),
      failStreamAfterRole: () =>
        bedrock.enqueue({
          kind: 'stream',
          fixture: 'amazon-bedrock-text.chunks.txt',
          exception: {
            type: 'serviceUnavailableException',
            message: 'Bedrock is unavailable',
            afterEvents: 1,
          },
        }),
      failStreamAfterContent: () => {
        // messageStart, "Let", " me count the \""
        bedrock.enqueue({
          kind: 'stream',
          fixture: 'amazon-bedrock-text.chunks.txt',
          exception: { type: 'modelStreamErrorException', message: 'Model stream error', afterEvents: 3 },
        });
        return 'Let me count the "';
      },
      failWithStatus: (status) =>
        bedrock.enqueue({
          kind: 'error',
          status,
          errorType:
            status === 429
              ? 'ThrottlingException'
              : status === 503
                ? 'ServiceUnavailableException'
                : 'InternalServerException',
          message: `fake bedrock failure ${status}`,
        }),
      // the fake records only the calls whose SigV4 signature it verified
      calls: () => bedrock.requests.length,
      expectCredentialsReached: () => {
        const sent = bedrock.requests.at(-1)!.headers;
        expect(sent.authorization).toMatch(
          new RegExp(`^AWS4-HMAC-SHA256 Credential=${BEDROCK.accessKeyId}/\\d{8}/${BEDROCK.region}/bedrock/`),
        );
        expect(sent['x-amz-security-token']).toBe(BEDROCK.sessionToken);
      },
    },
    {
      name: 'azure-openai',
      provider: 'azure-openai',
      model: 'gpt-4o',
      keys: {
        api_key: AZURE_KEY,
        custom_host: azure.url,
        cloudd_deployment_name: 'gpt4o',
        cloudd_api_version: '2024-10-21',
      },
      wrongKeys: {
        api_key: 'azure-wrong-key',
        custom_host: azure.url,
        cloudd_deployment_name: 'gpt4o',
        cloudd_api_version: '2024-10-21',
      },
      wrongKeysStatus: 401,
      answerText: azureAnswer,
      failStreamBeforeContent: () => azure.enqueue({ streamErrorAfter: 0 }),
      // the prompt-filter event and the role chunk
      failStreamAfterRole: () => azure.enqueue({ streamErrorAfter: 2 }),
      failStreamAfterContent: azurePartial,
      failWithStatus: (status) => azure.enqueue({ status }),
      calls: () => azure.requests.length,
      expectCredentialsReached: () => {
        const sent = azure.requests.at(-1)!;
        expect(sent.path).toBe('/openai/deployments/gpt4o/chat/completions');
        expect(header(sent.headers, 'api-key')).toBe(AZURE_KEY);
      },
    },
    {
      name: 'azure-ai',
      provider: 'azure-ai',
      model: 'Llama-3.3-70B-Instruct',
      keys: {
        api_key: AZURE_KEY,
        custom_host: azure.url,
        cloudd_endpoint_name: 'my-llama',
        cloudd_region: 'eastus2',
      },
      wrongKeys: {
        api_key: 'azure-wrong-key',
        custom_host: azure.url,
        cloudd_endpoint_name: 'my-llama',
        cloudd_region: 'eastus2',
      },
      wrongKeysStatus: 401,
      answerText: azureAnswer,
      failStreamBeforeContent: () => azure.enqueue({ streamErrorAfter: 0 }),
      // the prompt-filter event and the role chunk
      failStreamAfterRole: () => azure.enqueue({ streamErrorAfter: 2 }),
      failStreamAfterContent: azurePartial,
      failWithStatus: (status) => azure.enqueue({ status }),
      calls: () => azure.requests.length,
      expectCredentialsReached: () => {
        const sent = azure.requests.at(-1)!;
        expect(sent.path).toBe('/chat/completions');
        expect(header(sent.headers, 'authorization')).toBe(`Bearer ${AZURE_KEY}`);
      },
    },
    {
      name: 'cohere',
      provider: 'cohere',
      model: 'command-a-03-2025',
      keys: { api_key: COHERE_KEY, custom_host: cohere.url },
      wrongKeys: { api_key: 'co-wrong-key', custom_host: cohere.url },
      wrongKeysStatus: 401,
      answerText: () =>
        (readCohereJson('cohere-text') as { message: { content: Array<{ text: string }> } }).message
          .content[0]!.text,
      failStreamBeforeContent: () => cohere.enqueue({ streamErrorAfter: 0 }),
      // message-start, content-start
      failStreamAfterRole: () => cohere.enqueue({ streamErrorAfter: 2 }),
      failStreamAfterContent: () => {
        // message-start, content-start, "The", " capital"
        cohere.enqueue({ streamErrorAfter: 4 });
        return 'The capital';
      },
      failWithStatus: (status) => cohere.enqueue({ status }),
      calls: () => cohere.requests.length,
      expectCredentialsReached: () => {
        expect(header(cohere.requests.at(-1)!.headers, 'authorization')).toBe(`Bearer ${COHERE_KEY}`);
      },
    },
  ];

  return {
    anthropic,
    google,
    vertex,
    bedrock,
    azure,
    cohere,
    cases,
    byName: (name) => cases.find((c) => c.name === name)!,
    async close() {
      await Promise.all([
        vertexClaude.close(),
        anthropic.close(),
        google.close(),
        vertex.close(),
        bedrock.close(),
        azure.close(),
        cohere.close(),
      ]);
    },
  };
}

interface AnthropicStreamFaults {
  url: string;
  /** The next `:streamRawPredict` answer is cut after `afterEvents` events and ends with an error event. */
  failNextStream(afterEvents: number): void;
  close(): Promise<void>;
}

/**
 * A loopback relay in front of the Vertex fake, which has no way to fail a 200 Anthropic stream: every
 * request goes through to the fake unchanged (its auth checks and recording included); a stream answer can
 * be cut and closed with Anthropic's `event: error`, as Vertex relays it from the model.
 */
async function startAnthropicStreamFaults(upstream: string): Promise<AnthropicStreamFaults> {
  const armed: number[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      void (async () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (typeof value === 'string' && name !== 'host' && name !== 'content-length')
            headers[name] = value;
        }
        const answer = await fetch(`${upstream}${req.url ?? '/'}`, {
          method: req.method ?? 'POST',
          headers,
          ...(parts.length ? { body: Buffer.concat(parts) } : {}),
        });
        const text = await answer.text();
        const cutAfter = req.url?.includes(':streamRawPredict') && answer.ok ? armed.shift() : undefined;
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
        if (cutAfter === undefined) return void res.end(text);
        const events = text.split('\n\n').filter((event) => event.trim() !== '');
        for (const event of events.slice(0, cutAfter)) res.write(`${event}\n\n`);
        const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
        res.end(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
      })().catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    failNextStream: (afterEvents) => armed.push(afterEvents),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
