/**
 * The semantic cache end to end: the `openai` SDK against a gateway on a SQLite file, a fake OpenAI
 * upstream for both the chat model and the embedding model. The embedding model is the fake's `bow-…`:
 * bag-of-words vectors, so requests of the same content words are at similarity 1 and every word more
 * moves them apart by a known amount. The fake's chat answer repeats the question, so an answer tells
 * which request stored it.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { logsOf, target, traceHeaders, type Config } from '../routing/support.js';

let fake: FakeUpstream;
let gateway: TestGateway;

const EMBEDDER = { virtual_key: 'embedder', model: 'bow-embedding' };

function semanticConfig(cache: Config = {}, extra: Config = {}): Config {
  return target(fake, { cache: { mode: 'semantic', embedding: EMBEDDER, ...cache }, ...extra });
}

function sdk(config: Config, headers: Record<string, string> = {}, apiKey = gateway.adminKey): OpenAI {
  return new OpenAI({
    baseURL: gateway.url,
    apiKey: 'unused',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': apiKey, 'x-gateway-config': JSON.stringify(config), ...headers },
  });
}

type ChatParams = Omit<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, 'messages' | 'model'> & {
  model?: string;
  system?: string;
};

async function ask(
  question: string,
  options: { config?: Config; headers?: Record<string, string>; params?: ChatParams; apiKey?: string } = {},
) {
  const { system, model, ...params } = options.params ?? {};
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    ...(system ? [{ role: 'system' as const, content: system }] : []),
    { role: 'user', content: question },
  ];
  const { data, response } = await sdk(options.config ?? semanticConfig(), options.headers, options.apiKey)
    .chat.completions.create({ model: model ?? 'gpt-4o-mini', messages, ...params })
    .withResponse();
  return {
    content: data.choices[0].message.content,
    status: response.headers.get('x-gateway-cache-status'),
    similarity: response.headers.get('x-gateway-cache-similarity'),
    entry: response.headers.get('x-gateway-cache-entry-id'),
  };
}

const chatCalls = () => fake.requests.filter((request) => request.path.endsWith('/chat/completions')).length;
const embeddingCalls = () => fake.requests.filter((request) => request.path.endsWith('/embeddings')).length;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'sem' });
  gateway = await startGateway();
  const created = await fetch(`${gateway.url}/virtual-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
    body: JSON.stringify({
      slug: 'embedder',
      name: 'embedder',
      provider: 'openai',
      api_key: 'sk-embedder',
      custom_host: fake.url,
    }),
  });
  expect(created.status, await created.text()).toBe(200);
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

describe('semantic cache', () => {
  it('answers a paraphrase from the entry of the first question, and an equal request exactly', async () => {
    const first = await ask('What is the capital of France?');
    expect(first).toMatchObject({ content: '[sem] What is the capital of France?', status: 'SEMANTIC_MISS' });
    expect(first.entry).toMatch(/^sc_/);
    const calls = chatCalls();

    const paraphrase = await ask('Tell me the capital of France, please');
    expect(paraphrase).toMatchObject({
      content: '[sem] What is the capital of France?',
      status: 'SEMANTIC_HIT',
      similarity: '1.0000',
      entry: first.entry,
    });
    expect(chatCalls()).toBe(calls);

    const embeddings = embeddingCalls();
    const again = await ask('What is the capital of France?');
    expect(again).toMatchObject({ content: '[sem] What is the capital of France?', status: 'HIT' });
    // An exact match needs no embedding.
    expect(embeddingCalls()).toBe(embeddings);
    expect(fake.requests.filter((r) => r.path.endsWith('/embeddings')).at(-1)?.headers.authorization).toBe(
      'Bearer sk-embedder',
    );
  });

  it('equal requests at once share one provider call: the others wait and are answered exactly (HIT)', async () => {
    const calls = chatCalls();
    // The fake's fake-slow model answers after a second, so the four are in flight together.
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => ask('How old is the universe?', { params: { model: 'fake-slow' } })),
    );
    expect(chatCalls()).toBe(calls + 1);
    expect(answers.map((answer) => answer.status).sort()).toEqual(['HIT', 'HIT', 'HIT', 'SEMANTIC_MISS']);
    // One that comes while the first is with the provider is not even embedded.
    const embeddings = embeddingCalls();
    const [, late] = await Promise.all([
      ask('How old is the Moon?', { params: { model: 'fake-slow' } }),
      new Promise((resolve) => setTimeout(resolve, 300)).then(() =>
        ask('How old is the Moon?', { params: { model: 'fake-slow' } }),
      ),
    ]);
    expect(late.status).toBe('HIT');
    expect(embeddingCalls()).toBe(embeddings + 1);
    expect(chatCalls()).toBe(calls + 2);
    const leader = answers.find((answer) => answer.status === 'SEMANTIC_MISS');
    expect(leader?.entry).toMatch(/^sc_/);
    for (const answer of answers.filter((a) => a !== leader)) {
      expect(answer).toMatchObject({
        content: '[sem] How old is the universe?',
        similarity: '1.0000',
        entry: leader?.entry,
      });
    }
    // A forced refresh never waits.
    const [plain, refreshed] = await Promise.all([
      ask('How old is the Earth?', { params: { model: 'fake-slow' } }),
      ask('How old is the Earth?', {
        params: { model: 'fake-slow' },
        headers: { 'x-gateway-cache-force-refresh': 'true' },
      }),
    ]);
    expect([plain.status, refreshed.status]).toEqual(['SEMANTIC_MISS', 'REFRESH']);
    expect(chatCalls()).toBe(calls + 4);
  });

  it('calls the provider for a different question', async () => {
    await ask('What is the capital of Peru?');
    const calls = chatCalls();
    const other = await ask('What is the population of Peru?');
    expect(other).toMatchObject({
      content: '[sem] What is the population of Peru?',
      status: 'SEMANTIC_MISS',
    });
    expect(Number(other.similarity)).toBeLessThan(0.95);
    expect(chatCalls()).toBe(calls + 1);
  });

  it('never answers across workspace, namespace, model, parameters, system prompt or tools', async () => {
    const question = 'Which river flows through Vienna?';
    await ask(question);
    const workspace = await fetch(`${gateway.url}/workspaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
      body: JSON.stringify({ name: 'other', slug: `other-${randomUUID().slice(0, 8)}` }),
    });
    const workspaceBody = (await workspace.json()) as {
      id: string;
      admin_key?: { key: string };
      key?: string;
    };
    expect(workspace.status, JSON.stringify(workspaceBody)).toBe(200);
    const otherKey = workspaceBody.admin_key?.key ?? workspaceBody.key;
    expect(otherKey).toBeDefined();
    const tool: OpenAI.Chat.ChatCompletionTool = {
      type: 'function',
      function: { name: 'lookup', parameters: { type: 'object', properties: {} } },
    };
    const variants: Array<Parameters<typeof ask>[1]> = [
      { headers: { 'x-gateway-cache-namespace': 'elsewhere' } },
      { params: { model: 'gpt-4o' } },
      { params: { temperature: 0.2 } },
      { params: { system: 'Answer in French.' } },
      { params: { tools: [tool] } },
    ];
    for (const variant of variants) {
      const calls = chatCalls();
      const answer = await ask(`Which river flows through Vienna, please?`, variant);
      expect(answer.status, JSON.stringify(variant)).toBe('SEMANTIC_MISS');
      expect(chatCalls(), JSON.stringify(variant)).toBe(calls + 1);
    }
    // Another workspace has no virtual key 'embedder': it gets one of its own on the same fake.
    const vk = await fetch(`${gateway.url}/virtual-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': otherKey as string },
      body: JSON.stringify({
        slug: 'embedder',
        name: 'e',
        provider: 'openai',
        api_key: 'sk-e',
        custom_host: fake.url,
      }),
    });
    expect(vk.status, await vk.text()).toBe(200);
    const calls = chatCalls();
    const foreign = await ask(question, { apiKey: otherKey as string });
    expect(foreign.status).toBe('SEMANTIC_MISS');
    expect(foreign.similarity).toBeNull();
    expect(chatCalls()).toBe(calls + 1);
  });

  it('replays a streamed answer as the same stream', async () => {
    const client = sdk(semanticConfig());
    const read = async (content: string) => {
      const { data: stream, response } = await client.chat.completions
        .create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content }],
          stream: true,
          stream_options: { include_usage: true },
        })
        .withResponse();
      const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      return { chunks, status: response.headers.get('x-gateway-cache-status') };
    };
    const first = await read('Explain photosynthesis in plants');
    expect(first.status).toBe('SEMANTIC_MISS');
    const calls = chatCalls();
    const replay = await read('Please explain photosynthesis in plants');
    expect(replay.status).toBe('SEMANTIC_HIT');
    expect(chatCalls()).toBe(calls);
    expect(replay.chunks).toEqual(first.chunks);
    const text = replay.chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe('[sem] Explain photosynthesis in plants');
    expect(replay.chunks.at(-1)?.usage).toBeDefined();
    // A non-streamed request of the same words is another partition.
    expect((await ask('Explain photosynthesis in plants')).status).toBe('SEMANTIC_MISS');
  });

  it('answers only at or above the threshold', async () => {
    // Two content words against three sharing both: similarity √(2/3) ≈ 0.8165.
    await ask('Germany capital');
    const strict = await ask('Germany capital Italy');
    expect(strict).toMatchObject({ status: 'SEMANTIC_MISS', similarity: '0.8165' });
    await ask('Norway capital', { config: semanticConfig({ similarity_threshold: 0.8 }) });
    const loose = await ask('Norway capital Italy', {
      config: semanticConfig({ similarity_threshold: 0.8 }),
    });
    expect(loose).toMatchObject({
      status: 'SEMANTIC_HIT',
      similarity: '0.8165',
      content: '[sem] Norway capital',
    });
    const above = await ask('Norway capital Italy', {
      config: semanticConfig({ similarity_threshold: 0.9 }),
    });
    expect(above.status).not.toBe('SEMANTIC_HIT');
  });

  it('forgets an entry after max_age, and stores a new one on force-refresh', async () => {
    const config = semanticConfig({ max_age: 1 });
    await ask('How tall is Mount Everest?', { config });
    expect((await ask('Mount Everest: how tall?', { config })).status).toBe('SEMANTIC_HIT');
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await ask('Mount Everest: how tall?', { config })).status).toBe('SEMANTIC_MISS');

    const calls = chatCalls();
    const refreshed = await ask('Mount Everest: how tall?', {
      config,
      headers: { 'x-gateway-cache-force-refresh': 'true' },
    });
    expect(refreshed.status).toBe('REFRESH');
    expect(chatCalls()).toBe(calls + 1);
  });

  it('a forced refresh replaces the entries that would have answered it, the equal one included', async () => {
    const first = await ask('How heavy is a blue whale?');
    expect(first.status).toBe('SEMANTIC_MISS');
    const refreshed = await ask('A blue whale: how heavy?', {
      headers: { 'x-gateway-cache-force-refresh': 'true' },
    });
    expect(refreshed).toMatchObject({ status: 'REFRESH', content: '[sem] A blue whale: how heavy?' });
    // The first question, asked again as it was, is answered with the refreshed answer, not its own.
    await expect
      .poll(async () => {
        const again = await ask('How heavy is a blue whale?');
        return { status: again.status, content: again.content, entry: again.entry };
      })
      .toEqual({ status: 'SEMANTIC_HIT', content: '[sem] A blue whale: how heavy?', entry: refreshed.entry });
    const removed = await fetch(`${gateway.url}/cache/semantic/entries/${first.entry}`, {
      method: 'DELETE',
      headers: { 'x-gateway-api-key': gateway.adminKey },
    });
    expect(removed.status).toBe(404);
  });

  it("answers only with entries within the request's max_age, whatever the config that stored them", async () => {
    const daylong = semanticConfig({ max_age: 86_400 });
    await ask('How deep is the Mariana Trench?', { config: daylong });
    await ask('How long is the river Nile?', { config: daylong });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const lowered = semanticConfig({ max_age: 1 });
    const calls = chatCalls();
    // Neither an equal request nor a paraphrase is answered by the day-old entries.
    expect((await ask('How deep is the Mariana Trench?', { config: lowered })).status).toBe('SEMANTIC_MISS');
    expect((await ask('The river Nile: how long?', { config: lowered })).status).toBe('SEMANTIC_MISS');
    expect(chatCalls()).toBe(calls + 2);
    // What the lowered config stored answers it within its max_age.
    expect((await ask('How deep is the Mariana Trench?', { config: lowered })).status).toBe('HIT');
    expect((await ask('How long is the river Nile?', { config: lowered })).status).toBe('SEMANTIC_HIT');
  });

  it('stores no answer larger than 8 MiB, as the simple cache does', async () => {
    const huge = 'x'.repeat(9 * 1024 * 1024);
    // The request is embedded first, then asked.
    fake.enqueue({}, { text: huge });
    const first = await ask('Write me the longest answer you can');
    expect(first.status).toBe('SEMANTIC_MISS');
    expect(first.content).toHaveLength(huge.length);
    expect(first.entry).toBeNull();
    const calls = chatCalls();
    const again = await ask('Write me the longest answer you can');
    expect(again.status).toBe('SEMANTIC_MISS');
    expect(chatCalls()).toBe(calls + 1);
  });

  it('headers the config forwards to the provider partition the entries by their values', async () => {
    const config = semanticConfig({}, { forward_headers: ['x-tenant'] });
    const first = await ask('What is the tallest tree?', { config, headers: { 'x-tenant': 'a' } });
    expect(first.status).toBe('SEMANTIC_MISS');
    const other = await ask('What is the tallest tree?', { config, headers: { 'x-tenant': 'b' } });
    expect(other.status).toBe('SEMANTIC_MISS');
    const paraphrase = await ask('The tallest tree is what?', { config, headers: { 'x-tenant': 'b' } });
    expect(paraphrase).toMatchObject({ status: 'SEMANTIC_HIT', entry: other.entry });
  });

  it('names no entry and no similarity for an answer it did not store, as a fallback target gave', async () => {
    await ask('Where do penguins live?');
    const fallback = { strategy: { mode: 'fallback' }, targets: [semanticConfig(), target(fake)] };
    // The embedding is asked first, then the chat, which fails: the second target (no cache) answers.
    fake.enqueue({}, { status: 503 });
    const { traceId, headers } = traceHeaders();
    const answer = await ask('Where do penguins live in winter?', { config: fallback, headers });
    expect(answer).toMatchObject({ status: 'DISABLED', similarity: null, entry: null });
    const request = (await logsOf(gateway, traceId, 3)).find((r) => !r.is_attempt && r.endpoint === 'chat');
    expect(request).toMatchObject({ cache_status: 'DISABLED', cache_similarity: null });

    // With one target, the answer is the failure, and no entry is named.
    fake.enqueue({}, { status: 503 });
    const failed = await ask('Do penguins fly?').catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    const failedHeaders = (failed as InstanceType<typeof OpenAI.APIError>).headers;
    expect(failedHeaders?.get('x-gateway-cache-status')).toBe('SEMANTIC_MISS');
    expect(failedHeaders?.get('x-gateway-cache-entry-id')).toBeNull();
  });

  it('records the status and the similarity in the log', async () => {
    await ask('Who painted the Mona Lisa?');
    const { traceId, headers } = traceHeaders();
    await ask('Mona Lisa: who painted it?', { headers });
    const records = await logsOf(gateway, traceId, 2);
    const request = records.find((record) => !record.is_attempt && record.endpoint === 'chat');
    expect(request?.cache_status).toBe('SEMANTIC_HIT');
    expect(request?.cache_similarity).toBeCloseTo(1, 5);
    // The embedding is an internal call of the same trace.
    expect(records.some((record) => record.endpoint === 'embeddings')).toBe(true);
  });

  it('is invalidated by entry and by namespace through the management API', async () => {
    const admin = { 'x-gateway-api-key': gateway.adminKey };
    const stored = await ask('What does a cartographer do?');
    const removed = await fetch(`${gateway.url}/cache/semantic/entries/${stored.entry}`, {
      method: 'DELETE',
      headers: admin,
    });
    expect(removed.status).toBe(200);
    expect(await removed.json()).toEqual({
      object: 'semantic_cache_entry.deleted',
      id: stored.entry,
      deleted: true,
    });
    expect((await ask('What does a cartographer do?')).status).toBe('SEMANTIC_MISS');
    const again = await fetch(`${gateway.url}/cache/semantic/entries/${stored.entry}`, {
      method: 'DELETE',
      headers: admin,
    });
    expect(again.status).toBe(404);

    const ns = { 'x-gateway-cache-namespace': 'team-a' };
    await ask('What does a geologist do?', { headers: ns });
    await ask('What does a botanist do?', { headers: ns });
    expect((await ask('What does a geologist do, please?', { headers: ns })).status).toBe('SEMANTIC_HIT');
    const cleared = await fetch(`${gateway.url}/cache/semantic/entries?namespace=team-a`, {
      method: 'DELETE',
      headers: admin,
    });
    expect(await cleared.json()).toEqual({
      object: 'semantic_cache_entry.list.deleted',
      namespace: 'team-a',
      deleted: 2,
    });
    expect((await ask('What does a geologist do, please?', { headers: ns })).status).toBe('SEMANTIC_MISS');

    const missing = await fetch(`${gateway.url}/cache/semantic/entries`, {
      method: 'DELETE',
      headers: admin,
    });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { param: string } }).error.param).toBe('namespace');
  });

  it('answers from the provider when the embedding fails, and stores nothing', async () => {
    const config = semanticConfig({ embedding: { virtual_key: 'no-such-key', model: 'bow-embedding' } });
    const calls = chatCalls();
    for (let i = 0; i < 2; i++) {
      const answer = await ask('What is the speed of sound?', { config });
      expect(answer).toMatchObject({ content: '[sem] What is the speed of sound?', status: 'SEMANTIC_MISS' });
      expect(answer.entry).toBeNull();
    }
    expect(chatCalls()).toBe(calls + 2);
  });

  it("answers from the provider when the embedding hangs, within the target's request_timeout", async () => {
    const config = semanticConfig(
      { embedding: { virtual_key: 'embedder', model: 'fake-hang' } },
      { request_timeout: 1_000 },
    );
    const started = performance.now();
    const answer = await ask('How deep is the Mariana Trench?', { config });
    expect(answer).toMatchObject({
      content: '[sem] How deep is the Mariana Trench?',
      status: 'SEMANTIC_MISS',
    });
    expect(answer.entry).toBeNull();
    // The embedding's second, then the answer: not the embedding call's own deadline of minutes.
    expect(performance.now() - started).toBeLessThan(5_000);
  }, 15_000);

  it('refuses a semantic cache without an embedding model, naming the field', async () => {
    const config = target(fake, { cache: { mode: 'semantic' } });
    const error = await ask('Anything at all?', { config }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('config.cache.embedding');
    const bad = target(fake, { cache: { mode: 'semantic', embedding: EMBEDDER, similarity_threshold: 2 } });
    const invalid = await ask('Anything at all?', { config: bad }).catch((err: unknown) => err);
    expect(invalid).toBeInstanceOf(OpenAI.BadRequestError);
    expect((invalid as InstanceType<typeof OpenAI.BadRequestError>).param).toMatch(/similarity_threshold/);
    const simple = target(fake, { cache: { mode: 'simple', similarity_threshold: 0.9 } });
    const misplaced = await ask('Anything at all?', { config: simple }).catch((err: unknown) => err);
    expect(misplaced).toBeInstanceOf(OpenAI.BadRequestError);
    expect((misplaced as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(
      'config.cache.similarity_threshold',
    );
  });

  it("does not wait for the async hooks of the embedding's own config", async () => {
    const SLOW_MS = 3_000;
    let audited = 0;
    const audit = createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          audited += 1;
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        }, SLOW_MS),
      );
    });
    await new Promise<void>((resolve) => audit.listen(0, '127.0.0.1', resolve));
    try {
      const logURL = `http://127.0.0.1:${(audit.address() as AddressInfo).port}/audit`;
      const stored = await fetch(`${gateway.url}/configs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
        body: JSON.stringify({
          slug: 'audited-embedder',
          config: {
            virtual_key: 'embedder',
            input_guardrails: [{ id: 'audit', async: true, 'default.log': { logURL } }],
          },
        }),
      });
      expect(stored.status, await stored.text()).toBe(200);
      const config = semanticConfig({ embedding: { config: 'audited-embedder', model: 'bow-embedding' } });
      const started = performance.now();
      const answer = await ask('How tall is the Eiffel Tower in winter?', { config });
      expect(answer.status).toBe('SEMANTIC_MISS');
      expect(performance.now() - started).toBeLessThan(SLOW_MS - 1_000);
      // The audit still happens, after the answer.
      await expect.poll(() => audited, { timeout: SLOW_MS + 2_000 }).toBe(1);
    } finally {
      audit.closeAllConnections();
      await new Promise<void>((resolve) => audit.close(() => resolve()));
    }
  }, 15_000);
});
