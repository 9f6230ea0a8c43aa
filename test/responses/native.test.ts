/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// The Responses API natively on OpenAI and Azure OpenAI: the upstream's /v1/responses is called with the
// whole conversation and `store: false`, its Response and events come back with the gateway's ids and
// numbering, its encrypted reasoning carries over turns, and within one fallback walk a turn moves from
// OpenAI (native) to Anthropic (translated) with the whole history. The openai SDK against the gateway; the
// fakes answer in the real wire format (shaped after provider-fixtures/openai/responses/ and azure/).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startFakeAzure, type FakeAzure } from '../fakes/azure/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

const ANTHROPIC_KEY = 'sk-ant-native';
const GATEWAY_ID = /^[a-z]+_[0-9a-f]{48}$/;

let gateway: TestGateway;
let openai: FakeUpstream;
let anthropic: FakeAnthropic;
let azure: FakeAzure;

beforeAll(async () => {
  [gateway, openai, anthropic, azure] = await Promise.all([
    startGateway(),
    startFakeOpenAI({ name: 'oai' }),
    startFakeAnthropic({ apiKey: ANTHROPIC_KEY }),
    startFakeAzure({ deployments: ['gpt5-dep'] }),
  ]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), openai?.close(), anthropic?.close(), azure?.close()]);
});

beforeEach(() => openai.reset());

const openaiTarget = () => ({ provider: 'openai', api_key: 'sk-oai', custom_host: openai.url });
const anthropicTarget = () => ({ provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: anthropic.url });
const sentToOpenAI = () => openai.requests.at(-1)!;

async function collect(stream: AsyncIterable<any>): Promise<any[]> {
  const events: any[] = [];
  for await (const event of stream) events.push(event);
  for (const event of events) expectOpenAPIValid('ResponseStreamEvent', event);
  return events;
}

/** A recorded OpenAI Responses answer (provider-fixtures/openai/responses/). */
function recorded(name: string): unknown {
  const shared = process.env.SHARED_DIR ?? fileURLToPath(new URL('../../../shared', import.meta.url));
  const file = path.join(shared, 'reference', 'provider-fixtures', 'openai', 'responses', name);
  return JSON.parse(readFileSync(file, 'utf8'));
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

describe('OpenAI natively', () => {
  it('calls /v1/responses with the whole input and store: false, and answers with its own ids', async () => {
    const client = gatewayOpenAI(gateway, openaiTarget());
    const response = await client.responses.create({
      model: 'gpt-4o',
      instructions: 'Be brief.',
      input: 'Hello there',
      metadata: { team: 'a' },
    });
    expectOpenAPIValid('Response', response);
    const sent = sentToOpenAI();
    expect(sent.path).toBe('/v1/responses');
    expect(sent.headers.authorization).toBe('Bearer sk-oai');
    expect(sent.body).toMatchObject({
      model: 'gpt-4o',
      instructions: 'Be brief.',
      store: false,
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello there' }] }],
    });
    // The gateway's own fields stay with the gateway; its ids are not the provider's.
    expect(sent.body).not.toHaveProperty('metadata');
    expect(sent.body).not.toHaveProperty('previous_response_id');
    expect((sent.body as any).input[0]).not.toHaveProperty('id');
    expect(response.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(response.output_text).toBe('[oai] Hello there');
    expect(response.output[0]!.id).toMatch(GATEWAY_ID);
    expect(response.metadata).toEqual({ team: 'a' });
    expect(response.usage).toMatchObject({ input_tokens: 4, output_tokens: 3, total_tokens: 7 });

    const stored = await client.responses.retrieve(response.id);
    expect(stored).toEqual(response);
    const items = await client.responses.inputItems.list(response.id);
    expect(items.data).toHaveLength(1);
  });

  it('runs a background request in the gateway, the provider asked for no background run', async () => {
    const client = gatewayOpenAI(gateway, openaiTarget());
    const created = await client.responses.create({ model: 'gpt-4o', input: 'Later', background: true });
    expectOpenAPIValid('Response', created);
    expect(created.status).toBe('queued');
    let response = await client.responses.retrieve(created.id);
    for (let i = 0; i < 200 && ['queued', 'in_progress'].includes(response.status!); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      response = await client.responses.retrieve(created.id);
    }
    // A background run would be the provider's to keep (store: false forbids it) and answers `queued`.
    expect(sentToOpenAI().body).not.toHaveProperty('background');
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('[oai] Later');
  });

  it("keeps the provider's usage, its cache writes included", async () => {
    const client = gatewayOpenAI(gateway, openaiTarget());
    const usage = {
      input_tokens: 2400,
      input_tokens_details: { cached_tokens: 300, cache_write_tokens: 2000 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 2405,
    };
    openai.enqueue({
      status: 200,
      body: {
        id: 'resp_upstream',
        object: 'response',
        created_at: 1,
        status: 'completed',
        model: 'gpt-4o',
        output: [],
        usage,
      },
    });
    const response = await client.responses.create({ model: 'gpt-4o', input: 'Hi' });
    expect(response.usage).toEqual(usage);
  });

  it('relays the stream with the gateway ids and numbering, and exactly one terminal event', async () => {
    const client = gatewayOpenAI(gateway, openaiTarget());
    const events = await collect(
      await client.responses.create({
        model: 'gpt-5',
        input: 'Stream it please',
        reasoning: { effort: 'low', summary: 'auto' },
        stream: true,
      }),
    );
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.filter((e) => TERMINAL.has(e.type)).map((e) => e.type)).toEqual(['response.completed']);
    expect(events.at(-1).type).toBe('response.completed');
    const ids = new Set(events.map((e) => e.response?.id).filter(Boolean));
    expect(ids.size).toBe(1);
    const [responseId] = [...ids] as string[];
    expect(responseId).toMatch(/^resp_[0-9a-f]{48}$/);
    // The provider's reasoning summary events are relayed, with the item ids rewritten.
    expect(events.map((e) => e.type)).toContain('response.reasoning_summary_text.delta');
    for (const event of events) {
      if (event.item_id !== undefined) expect(event.item_id).toMatch(GATEWAY_ID);
      if (event.item?.id !== undefined) expect(event.item.id).toMatch(GATEWAY_ID);
    }
    const text = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    expect(text).toBe('[oai] Stream it please');
    const final = events.at(-1).response;
    expect(final.output.map((item: any) => item.type)).toEqual(['reasoning', 'message']);
    expect(final.output[0].encrypted_content).toMatch(/^gAAAAAB/);
    expect(final.usage.output_tokens_details.reasoning_tokens).toBe(8);
    // Asked back encrypted, since the provider keeps nothing.
    expect(sentToOpenAI().body).toMatchObject({
      stream: true,
      store: false,
      include: ['reasoning.encrypted_content'],
    });
    const stored = await client.responses.retrieve(responseId);
    expect(stored.output).toEqual(final.output);
    expect(stored.status).toBe('completed');
  });

  it('sends the encrypted reasoning back on the next turn, with the whole history', async () => {
    const client = gatewayOpenAI(gateway, openaiTarget());
    const first = await client.responses.create({
      model: 'gpt-5',
      input: 'First question',
      reasoning: { effort: 'medium' },
    });
    const reasoning = first.output.find((item) => item.type === 'reasoning') as any;
    expect(reasoning.encrypted_content).toMatch(/^gAAAAAB/);
    const second = await client.responses.create({
      model: 'gpt-5',
      previous_response_id: first.id,
      input: 'Second question',
      reasoning: { effort: 'medium' },
    });
    expectOpenAPIValid('Response', second);
    const input = (sentToOpenAI().body as any).input;
    expect(input.map((item: any) => item.type ?? 'message')).toEqual([
      'message',
      'reasoning',
      'message',
      'message',
    ]);
    expect(input[1]).toMatchObject({ id: reasoning.id, encrypted_content: reasoning.encrypted_content });
    expect(input[2].content[0].text).toBe('[oai] First question');
    expect(input[3].content[0].text).toBe('Second question');
    expect(sentToOpenAI().body).not.toHaveProperty('previous_response_id');
  });

  it('is incomplete at max_output_tokens, as the provider says', async () => {
    const client = gatewayOpenAI(gateway, openaiTarget());
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
    openai.enqueue({ text: words });
    const response = await client.responses.create({ model: 'gpt-4o', input: 'Talk', max_output_tokens: 16 });
    expectOpenAPIValid('Response', response);
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('fails in band with response.failed when the stream breaks, and stores it failed', async () => {
    const client = gatewayOpenAI(gateway, openaiTarget());
    openai.enqueue({ cutAfter: 5 });
    const events = await collect(
      await client.responses.create({ model: 'gpt-4o', input: 'one two three four five', stream: true }),
    );
    expect(events.at(-1).type).toBe('response.failed');
    expect(events.filter((e) => TERMINAL.has(e.type))).toHaveLength(1);
    const stored = await client.responses.retrieve(events.at(-1).response.id);
    expect(stored.status).toBe('failed');
    // The message it cut short is done, incomplete, with the text the client was sent; so it is stored.
    const sent = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    expect(sent).not.toBe('');
    const done = events.filter((e) => e.type === 'response.output_item.done');
    expect(done.map((e) => [e.item.status, e.item.content[0].text])).toEqual([['incomplete', sent]]);
    expect(events.at(-2)).toBe(done[0]);
    expect(stored.output).toEqual([done[0].item]);
    expect(events.at(-1).response.output).toEqual([done[0].item]);
  });

  it("fails a response with the provider's code when the document lists it, else server_error", async () => {
    const client = gatewayOpenAI(gateway, openaiTarget());
    const failed = (code: string) => ({
      id: 'resp_upstream',
      object: 'response',
      created_at: 1,
      status: 'failed',
      model: 'gpt-4o',
      output: [],
      error: {
        code,
        message: 'Invalid prompt: your prompt was flagged as potentially violating our usage policy.',
      },
    });
    const codes: string[] = [];
    for (const code of ['invalid_prompt', 'some_new_code']) {
      openai.enqueue({ status: 200, body: failed(code) });
      const created = await client.responses.create({ model: 'gpt-4o', input: 'Hi', background: true });
      let response: any = created;
      for (const deadline = Date.now() + 10_000; ['queued', 'in_progress'].includes(response.status);) {
        if (Date.now() > deadline) throw new Error(`response still ${response.status}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
        response = await client.responses.retrieve(created.id);
      }
      expectOpenAPIValid('Response', response);
      expect(response.status).toBe('failed');
      expect(response.error.message).toContain('Invalid prompt');
      codes.push(response.error.code);
    }
    expect(codes).toEqual(['invalid_prompt', 'server_error']);
  });

  it('passes built-in tools and a stored prompt to the provider that runs them', async () => {
    const client = gatewayOpenAI(gateway, openaiTarget());
    const prompt = { id: 'pmpt_123', version: '2', variables: { city: 'Paris' } };
    const response = await client.responses.create({
      model: 'gpt-4o',
      input: 'Search',
      tools: [{ type: 'web_search' } as any],
      prompt,
    });
    expect(response.status).toBe('completed');
    expect((sentToOpenAI().body as any).tools).toEqual([{ type: 'web_search' }]);
    expect((sentToOpenAI().body as any).prompt).toEqual(prompt);
  });

  it('checks a file_search tool against its fields before the provider is called', async () => {
    const client = gatewayOpenAI(gateway, openaiTarget());
    const search = {
      type: 'file_search',
      vector_store_ids: ['vs_1'],
      max_num_results: 5,
      filters: { type: 'eq', key: 'team', value: 'search' },
      ranking_options: { ranker: 'auto', score_threshold: 0.5 },
    };
    const calls = openai.requests.length;
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ ...search, vector_store_ids: 'vs_1' }, 'tools[0].vector_store_ids'],
      [{ type: 'file_search' }, 'tools[0].vector_store_ids'],
      [{ ...search, max_num_results: 2.5 }, 'tools[0].max_num_results'],
      [{ ...search, max_num_results: 51 }, 'tools[0].max_num_results'],
      [{ ...search, filters: 'team' }, 'tools[0].filters'],
      [{ ...search, ranking_options: { score_threshold: 2 } }, 'tools[0].ranking_options.score_threshold'],
    ];
    for (const [tool, param] of bad) {
      const error: any = await client.responses
        .create({ model: 'gpt-4o', input: 'Search', tools: [tool as any] })
        .catch((e: unknown) => e);
      expect(error, param).toBeInstanceOf(OpenAI.APIError);
      expect(error.status).toBe(400);
      expect(error.error).toMatchObject({ param, type: 'invalid_request_error' });
    }
    expect(openai.requests.length).toBe(calls);

    const response = await client.responses.create({
      model: 'gpt-4o',
      input: 'Search',
      tools: [search as any],
    });
    expect(response.status).toBe('completed');
    expect((sentToOpenAI().body as any).tools).toEqual([search]);
  });

  it('passes a tool_choice of a built-in tool, or of allowed tools, to the provider', async () => {
    const client = gatewayOpenAI(gateway, openaiTarget());
    for (const toolChoice of [
      { type: 'web_search_preview' },
      { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'web_search_preview' }] },
    ]) {
      const response = await client.responses.create({
        model: 'gpt-4o',
        input: 'Search',
        tools: [{ type: 'web_search_preview' }],
        tool_choice: toolChoice as any,
      });
      expect(response.status).toBe('completed');
      expect((sentToOpenAI().body as any).tool_choice).toEqual(toolChoice);
    }
  });

  it('takes the output of a native answer back as input, its built-in tool calls included', async () => {
    const client = gatewayOpenAI(gateway, openaiTarget());
    openai.enqueue({ status: 200, body: recorded('openai-web-search-tool.1.json') });
    const first = await client.responses.create({
      model: 'gpt-5-mini',
      input: 'Tech news today?',
      tools: [{ type: 'web_search' } as any],
      store: false,
    });
    const searches = first.output.filter((item) => item.type === 'web_search_call');
    expect(searches.length).toBeGreaterThan(0);
    // Stateless, as the SDK's guides do it: the previous output, then the next message.
    await client.responses.create({
      model: 'gpt-5-mini',
      input: [...(first.output as any[]), { role: 'user', content: 'Which one matters most?' }],
      store: false,
    });
    const sent = (sentToOpenAI().body as any).input;
    expect(sent.filter((item: any) => item.type === 'web_search_call')).toEqual(searches);
  });
});

describe('the cache on native answers', () => {
  it('replays a native stream and answer as new responses', async () => {
    const client = gatewayOpenAI(gateway, { ...openaiTarget(), cache: { mode: 'simple' } });
    const ask = { model: 'gpt-4o', input: 'Cache me natively' };
    for (const stream of [false, true]) {
      openai.reset();
      const first = await client.responses.create({ ...ask, stream } as any).withResponse();
      const second = await client.responses.create({ ...ask, stream } as any).withResponse();
      expect(second.response.headers.get('x-gateway-cache-status')).toBe('HIT');
      expect(openai.requests).toHaveLength(1);
      const read = async (data: any) => {
        if (!stream) return data;
        const events = await collect(data);
        expect(events.at(-1).type).toBe('response.completed');
        return events.at(-1).response;
      };
      const [a, b] = [await read(first.data), await read(second.data)];
      expect(b.id).not.toBe(a.id);
      expect(b.output[0].content[0].text).toBe('[oai] Cache me natively');
      expect((await client.responses.retrieve(b.id)).status).toBe('completed');
    }
  });
});

describe('guardrails on native answers', () => {
  const guarded = (deny: string) =>
    gatewayOpenAI(gateway, {
      ...openaiTarget(),
      output_guardrails: [
        { id: 'no-word', deny: true, 'default.contains': { words: [deny], operator: 'none' } },
      ],
    });

  it('denies a native stream before any of its text goes out, and stores the response failed', async () => {
    const error: any = await guarded('Secret')
      .responses.create({ model: 'gpt-4o', input: 'Secret plans', stream: true })
      .then(
        async (stream) => {
          for await (const _ of stream) void _;
          return undefined;
        },
        (err: unknown) => err,
      );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(446);
    expect(JSON.stringify(error.error)).not.toMatch(/Secret plans/);
    expect(openai.requests).toHaveLength(1);
  });

  it('redacts personal data in a native stream, its done events and the stored response', async () => {
    const client = gatewayOpenAI(gateway, {
      ...openaiTarget(),
      output_guardrails: [{ id: 'pii', 'default.pii': { categories: ['email'], redact: true } }],
    });
    openai.enqueue({ text: 'Mail jane.doe@example.com now' });
    const events = await collect(
      await client.responses.create({ model: 'gpt-4o', input: 'Hi', stream: true }),
    );
    expect(JSON.stringify(events)).not.toMatch(/jane\.doe/);
    const text = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    expect(text).toBe('Mail [EMAIL_1] now');
    const final = events.at(-1).response;
    expect(final.output[0].content[0].text).toBe('Mail [EMAIL_1] now');
    const stored = await client.responses.retrieve(final.id);
    expect(stored.output_text).toBe('Mail [EMAIL_1] now');
  });

  it('lets a passing native stream through whole', async () => {
    const events = await collect(
      await guarded('zebra').responses.create({ model: 'gpt-4o', input: 'Open plans', stream: true }),
    );
    expect(events.at(-1).type).toBe('response.completed');
    expect(events.at(-1).response.output[0].content[0].text).toBe('[oai] Open plans');
  });
});

describe('one walk, native then translated', () => {
  it('moves the conversation from OpenAI (native) to Anthropic (translated) with the whole history', async () => {
    const client = gatewayOpenAI(gateway, {
      strategy: { mode: 'fallback', on_status_codes: [503] },
      targets: [openaiTarget(), { ...anthropicTarget(), override_params: { model: 'claude-sonnet-4-5' } }],
    });
    // Turn 1: OpenAI answers natively, with encrypted reasoning.
    const first = await client.responses.create({
      model: 'gpt-5',
      input: 'Plan my trip',
      reasoning: { effort: 'low' },
    });
    expect(first.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    const anthropicCalls = anthropic.requests.length;

    // Turn 2: OpenAI is unavailable; Anthropic gets the history translated, without OpenAI's reasoning.
    openai.enqueue({ status: 503 });
    const second = await client.responses.create({
      model: 'gpt-5',
      previous_response_id: first.id,
      input: 'And the hotel?',
    });
    expectOpenAPIValid('Response', second);
    expect(anthropic.requests).toHaveLength(anthropicCalls + 1);
    const claudeSaw = anthropic.requests.at(-1)!.body as any;
    expect(claudeSaw.model).toBe('claude-sonnet-4-5');
    expect(claudeSaw.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Plan my trip' }] },
      { role: 'assistant', content: [{ type: 'text', text: '[oai] Plan my trip' }] },
      { role: 'user', content: [{ type: 'text', text: 'And the hotel?' }] },
    ]);
    expect(second.previous_response_id).toBe(first.id);

    // Turn 3: back on OpenAI natively, which gets its own reasoning and Claude's answer.
    const third = await client.responses.create({
      model: 'gpt-5',
      previous_response_id: second.id,
      input: 'Thanks',
    });
    expectOpenAPIValid('Response', third);
    const input = (sentToOpenAI().body as any).input;
    expect(input.map((item: any) => item.type)).toEqual([
      'message',
      'reasoning',
      'message',
      'message',
      'message',
      'message',
    ]);
    expect(input[1].encrypted_content).toBe((first.output[0] as any).encrypted_content);
    expect(input[4].role).toBe('assistant');
    expect(input[4].content[0].text).toBe(second.output_text);
  });

  it('leaves the items of built-in tools OpenAI ran out of the history a translated target gets', async () => {
    const client = gatewayOpenAI(gateway, {
      strategy: { mode: 'fallback', on_status_codes: [503] },
      targets: [openaiTarget(), { ...anthropicTarget(), override_params: { model: 'claude-sonnet-4-5' } }],
    });
    // Turn 1: OpenAI searched the web (the recorded answer: reasoning, web_search_call items, a message).
    openai.enqueue({ status: 200, body: recorded('openai-web-search-tool.1.json') });
    const first = await client.responses.create({
      model: 'gpt-5-mini',
      input: 'Tech news today?',
      tools: [{ type: 'web_search' } as any],
    });
    expect(first.output.some((item) => item.type === 'web_search_call')).toBe(true);

    // Turn 2 on Anthropic: chat has no turn for a search the provider ran; its answer text carries it.
    openai.enqueue({ status: 503 });
    const second = await client.responses.create({
      model: 'gpt-5-mini',
      previous_response_id: first.id,
      input: 'Which one matters most?',
    });
    expect(second.status).toBe('completed');
    const claudeSaw = anthropic.requests.at(-1)!.body as any;
    expect(claudeSaw.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(claudeSaw.messages[1].content).toEqual([{ type: 'text', text: first.output_text }]);
  });
});

describe('Azure OpenAI natively', () => {
  const azureTarget = () => ({
    provider: 'azure-openai',
    api_key: azure.apiKey,
    custom_host: azure.url,
    cloudd_deployment_name: 'gpt5-dep',
    api_version: '2025-04-01-preview',
  });

  it('calls {resource}/openai/responses with the api-version and the deployment as the model', async () => {
    const client = gatewayOpenAI(gateway, azureTarget());
    const response = await client.responses.create({ model: 'gpt-5', input: 'Hi Azure' });
    expectOpenAPIValid('Response', response);
    expect(response.output_text).toBe('[azure] Hi Azure');
    const sent = azure.requests.at(-1)!;
    expect(sent.path).toBe('/openai/responses');
    expect(sent.query.get('api-version')).toBe('2025-04-01-preview');
    expect(sent.headers['api-key']).toBe(azure.apiKey);
    expect(sent.body).toMatchObject({ model: 'gpt5-dep', store: false });

    const events = await collect(
      await client.responses.create({
        model: 'gpt-5',
        previous_response_id: response.id,
        input: 'Again',
        stream: true,
      }),
    );
    expect(events.at(-1).type).toBe('response.completed');
    expect(events.at(-1).response.output_text ?? events.at(-1).response.output[0].content[0].text).toBe(
      '[azure] Again',
    );
    expect((azure.requests.at(-1)!.body as any).input).toHaveLength(3);
  });
});
