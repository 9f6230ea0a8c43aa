/**
 * Provider secrets never leave the gateway: not in a log line, not in a log record, not in an error body
 * (even when the provider's own error echoes the key), not in a management response. Every secret is a
 * distinctive string, and every byte the gateway produced is searched for each of them.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayServer, type GatewayServer } from '../../src/gateway-server.js';
import { loadSettings } from '../../src/settings.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import type { Reply } from '../management/http.js';

const tag = randomBytes(4).toString('hex');
const SECRETS = {
  bearer: `sk-bearer-SECRET-${tag}-aaaaaaaaaaaa`,
  virtualKey: `sk-vkey-SECRET-${tag}-bbbbbbbbbbbb`,
  catalog: `sk-catalog-SECRET-${tag}-cccccccccccc`,
  inlineApiKey: `sk-inline-SECRET-${tag}-dddddddddddd`,
  inlineCloudcSecret: `cloudc-SECRET-${tag}-eeeeeeeeeeee`,
  storedConfig: `sk-stored-SECRET-${tag}-ffffffffffff`,
} as const;

/** Every byte the gateway produced: its log lines and every response (status line, headers, body). */
const captured: string[] = [];
let logLines = '';

let server: GatewayServer;
let url: string;
let adminKey: string;
let fake: FakeUpstream;
let dataDir: string;

function record(label: string, reply: Reply, headers?: Headers): Reply {
  captured.push(`${label} ${reply.status}\n${headers ? JSON.stringify([...headers]) : ''}\n${reply.text}`);
  return reply;
}

/** A pass-through answer is relayed unchanged (the interface says so), echo of the caller's own key
 * included; it is not searched. Its log record is. */
const UNSEARCHED = new Set<string>();

async function send(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      'x-gateway-api-key': adminKey,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return record(`${method} ${path}`, { status: response.status, body: parsed, text }, response.headers);
}

const chatBody = (content: string, stream = false) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content }],
  ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
});

/** A provider 401 that quotes the key it was sent, as some providers do (here in its `param` too). */
function echoingUnauthorized(secret: string) {
  return {
    status: 401,
    body: {
      error: {
        message: `Incorrect API key provided: ${secret}. You can find your API key in your dashboard.`,
        type: 'invalid_request_error',
        param: secret,
        code: 'invalid_api_key',
      },
    },
  };
}

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'secrets' });
  dataDir = mkdtempSync(join(tmpdir(), 'gateway-secrets-'));
  adminKey = `gw-test-${randomBytes(16).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    PORT: '0',
    HOST: '127.0.0.1',
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_KEY: adminKey,
    GATEWAY_LOG_FLUSH_INTERVAL_MS: '20',
    GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
    GATEWAY_LOG_BODIES: 'true',
  };
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines += chunk.toString('utf8');
      done();
    },
  });
  // The most talkative level there is, so anything the gateway would ever log is seen here.
  server = await createGatewayServer(loadSettings(env), { env, logger: pino({ level: 'trace' }, sink) });
  url = `${await server.listen()}/v1`;
});

afterAll(async () => {
  await server?.close();
  await fake?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const vkHeaders = { 'x-gateway-virtual-key': 'secret-vk' };
const catalogHeaders = { 'x-gateway-provider': '@secret-catalog' };
const storedConfigHeaders = { 'x-gateway-config': 'secret-config' };
const bearerHeaders = () => ({
  authorization: `Bearer ${SECRETS.bearer}`,
  'x-gateway-provider': 'openai',
  'x-gateway-custom-host': fake.url,
});
const inlineHeaders = () => ({
  'x-gateway-config': JSON.stringify({
    strategy: { mode: 'fallback' },
    targets: [
      {
        provider: 'bedrock',
        cloudc_access_key_id: 'AKIAEXAMPLEINLINE',
        cloudc_secret_access_key: SECRETS.inlineCloudcSecret,
        cloudc_region: 'us-east-1',
        custom_host: fake.origin,
        override_params: { model: 'anthropic.claude-3-haiku' },
      },
      { provider: 'openai', api_key: SECRETS.inlineApiKey, custom_host: fake.url },
    ],
  }),
});

/**
 * Lists the log until it holds `atLeast` records, each then read by id too, so that the search covers them.
 * A call's record is written after its answer has gone out: `atLeast` must count every record of the
 * calls made so far, or the last ones may be missing from what is searched.
 */
async function waitForLogs(atLeast: number): Promise<Reply> {
  let list: Reply;
  const deadline = Date.now() + 10_000;
  do {
    await new Promise((resolve) => setTimeout(resolve, 50));
    list = await send('GET', '/logs?limit=1000');
  } while (list.body.data.length < atLeast && Date.now() < deadline);
  for (const entry of list.body.data) await send('GET', `/logs/${entry.id}`);
  return list;
}

function leaks(): string[] {
  const found: string[] = [];
  for (const [name, secret] of Object.entries(SECRETS)) {
    for (const text of captured) {
      if (!UNSEARCHED.has(text) && text.includes(secret)) found.push(`${name} in ${text.slice(0, 120)}`);
    }
    if (logLines.includes(secret)) found.push(`${name} in a log line`);
  }
  return found;
}

function databaseLeaks(): string[] {
  const files = readdirSync(dataDir).filter((name) => name.startsWith('gateway.db'));
  expect(files.length).toBeGreaterThan(0);
  const bytes = files.map((name) => readFileSync(join(dataDir, name)).toString('latin1')).join('');
  // Stored configs are encrypted at rest like credentials, so their key is searched for too.
  const names = [
    'bearer',
    'virtualKey',
    'catalog',
    'inlineApiKey',
    'inlineCloudcSecret',
    'storedConfig',
  ] as const;
  return names.filter((name) => bytes.includes(SECRETS[name]));
}

describe('provider secrets, on calls that succeed or that the gateway refuses', () => {
  it('a provider key sent as Authorization: Bearer', async () => {
    expect((await send('POST', '/chat/completions', chatBody('bearer ok'), bearerHeaders())).status).toBe(
      200,
    );
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRETS.bearer}`);
    const streamed = await send(
      'POST',
      '/chat/completions',
      chatBody('bearer stream', true),
      bearerHeaders(),
    );
    expect(streamed.status).toBe(200);
    // The fake answers a pass-through call with the request it received, headers included.
    expect((await send('POST', '/rerank', { query: 'q' }, bearerHeaders())).status).toBe(200);
    UNSEARCHED.add(captured.at(-1)!);
  });

  it("a virtual key's api_key and a catalog provider's api_key", async () => {
    const vk = await send('POST', '/virtual-keys', {
      slug: 'secret-vk',
      provider: 'openai',
      api_key: SECRETS.virtualKey,
      custom_host: fake.url,
    });
    expect(vk.status, vk.text).toBe(200);
    const catalog = await send('POST', '/providers', {
      slug: 'secret-catalog',
      provider: 'openai',
      api_key: SECRETS.catalog,
      custom_host: fake.url,
    });
    expect(catalog.status, catalog.text).toBe(200);
    await send('GET', '/virtual-keys');
    await send('GET', '/virtual-keys/secret-vk');
    await send('PATCH', '/virtual-keys/secret-vk', { name: 'renamed' });
    await send('GET', '/providers');
    await send('GET', '/providers/secret-catalog');
    for (const [headers, secret] of [
      [vkHeaders, SECRETS.virtualKey],
      [catalogHeaders, SECRETS.catalog],
    ] as const) {
      expect((await send('POST', '/chat/completions', chatBody('stored ok'), headers)).status).toBe(200);
      expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${secret}`);
    }
  });

  it('an inline x-gateway-config with api_key and cloudc_secret_access_key', async () => {
    // The cloud target is refused; the fallback answers.
    fake.enqueue({
      status: 403,
      body: { message: 'The security token included in the request is invalid.' },
    });
    const answered = await send('POST', '/chat/completions', chatBody('inline ok'), inlineHeaders());
    expect(answered.status, answered.text).toBe(200);
    expect(fake.requests.at(-2)?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAEXAMPLEINLINE\//,
    );
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRETS.inlineApiKey}`);
    // A config the gateway refuses is not quoted back with its keys.
    const invalid = { ...JSON.parse(inlineHeaders()['x-gateway-config']), retry: { attempts: 'many' } };
    const bad = await send('POST', '/chat/completions', chatBody('bad'), {
      'x-gateway-config': JSON.stringify(invalid),
    });
    expect(bad.status).toBe(400);
  });

  it('a stored config with an api_key', async () => {
    const config = { provider: 'openai', api_key: SECRETS.storedConfig, custom_host: fake.url };
    const created = await send('POST', '/configs', { slug: 'secret-config', config });
    expect(created.status, created.text).toBe(200);
    await send('PATCH', '/configs/secret-config', { config: { ...config, retry: { attempts: 0 } } });
    await send('GET', '/configs');
    await send('GET', '/configs/secret-config');
    await send('GET', '/configs/secret-config/versions');
    // A config the management API refuses is not quoted back with its key.
    const refused = await send('POST', '/configs', {
      slug: 'bad',
      config: { ...config, retry: { attempts: -1 } },
    });
    expect(refused.status).toBe(400);
    expect(
      (await send('POST', '/chat/completions', chatBody('stored config ok'), storedConfigHeaders)).status,
    ).toBe(200);
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRETS.storedConfig}`);
  });

  it('appear in no response, no log record, no log line and no database file', async () => {
    // Bearer: a call, a stream, a pass-through; the virtual key's and the catalog's calls; the inline
    // config's call with its two attempts, and its refused request; the stored config's call.
    const list = await waitForLogs(10);
    // The records did capture the calls, so searching them means something.
    expect(list.text).toContain('stored config ok');
    expect(list.text).toContain('inline ok');
    expect(captured.join('').length + logLines.length).toBeGreaterThan(10_000);
    expect(leaks()).toEqual([]);
    expect(databaseLeaks()).toEqual([]);
  });
});

describe('provider secrets, when the provider quotes the key back in its error', () => {
  it('the calls are refused by the provider', async () => {
    fake.enqueue(echoingUnauthorized(SECRETS.bearer));
    expect(
      (await send('POST', '/chat/completions', chatBody('bearer refused'), bearerHeaders())).status,
    ).toBe(401);
    for (const [headers, secret] of [
      [vkHeaders, SECRETS.virtualKey],
      [catalogHeaders, SECRETS.catalog],
      [storedConfigHeaders, SECRETS.storedConfig],
    ] as const) {
      fake.enqueue(echoingUnauthorized(secret));
      expect((await send('POST', '/chat/completions', chatBody('refused'), headers)).status).toBe(401);
    }
    fake.enqueue(
      { status: 403, body: { message: `Signature mismatch for ${SECRETS.inlineCloudcSecret}` } },
      echoingUnauthorized(SECRETS.inlineApiKey),
    );
    expect(
      (await send('POST', '/chat/completions', chatBody('inline refused'), inlineHeaders())).status,
    ).toBe(401);
    fake.enqueue(echoingUnauthorized(SECRETS.bearer));
    const passthrough = await send('POST', '/rerank', { query: 'q' }, bearerHeaders());
    expect(passthrough.status).toBe(401);
    UNSEARCHED.add(captured.at(-1)!);
    // A pass-through call under a virtual key, to a provider that quotes the key in its body and in a
    // header: the caller holds only a gateway key, so neither is relayed.
    fake.enqueue({
      ...echoingUnauthorized(SECRETS.virtualKey),
      headers: { 'x-echo-authorization': `Bearer ${SECRETS.virtualKey}` },
    });
    const relayed = await send('POST', '/rerank', { query: 'q' }, vkHeaders);
    expect(relayed.status).toBe(401);
  });

  // A provider that quotes the key it was sent puts it in its error body (and may in a header): the
  // target's credential values are cut out before an answer is returned, recorded or logged.
  it('appear in no error body, no log record, no log line and no database file', async () => {
    // The 10 records above; the bearer's, the virtual key's, the catalog's and the stored config's refused
    // calls; the inline config's with its two attempts; the two pass-through calls.
    await waitForLogs(19);
    expect(leaks()).toEqual([]);
    expect(databaseLeaks()).toEqual([]);
  });
});
