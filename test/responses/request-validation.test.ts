/* eslint-disable @typescript-eslint/no-explicit-any -- tests send what the SDK's types would not let through */
// POST /v1/responses checks its body as OpenAI's document gives it, before any provider is called: each
// tool by its type (the document's `Tool` union), each input part by its kind. The openai SDK against the
// gateway, with the fake OpenAI Responses API as the native target, which runs every tool it is sent.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

let gateway: TestGateway;
let openai: FakeUpstream;
let client: OpenAI;

beforeAll(async () => {
  [gateway, openai] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'oai' })]);
  client = gatewayOpenAI(gateway, { provider: 'openai', api_key: 'sk-oai', custom_host: openai.url });
});

afterAll(async () => {
  await Promise.all([gateway?.close(), openai?.close()]);
});

beforeEach(() => openai.reset());

async function refusal(body: Record<string, unknown>): Promise<any> {
  const error: any = await client.responses
    .create({ model: 'gpt-4o', input: 'Hi', ...body } as any)
    .catch((err: unknown) => err);
  expect(error, JSON.stringify(body)).toBeInstanceOf(OpenAI.APIError);
  expect(error.status).toBe(400);
  expect(error.error.type).toBe('invalid_request_error');
  return error.error;
}

/** One tool of every type the OpenAI document's `Tool` union lists, each with the fields it requires. */
const EVERY_TOOL = [
  { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false },
  { type: 'file_search', vector_store_ids: ['vs_1'] },
  { type: 'computer' },
  { type: 'computer_use_preview', environment: 'browser', display_width: 1024, display_height: 768 },
  { type: 'web_search' },
  { type: 'web_search_2025_08_26', search_context_size: 'low' },
  { type: 'mcp', server_label: 'deepwiki', server_url: 'https://mcp.deepwiki.com/mcp' },
  { type: 'code_interpreter', container: { type: 'auto' } },
  { type: 'code_interpreter', container: 'cntr_123' },
  { type: 'programmatic_tool_calling' },
  { type: 'image_generation', quality: 'low' },
  { type: 'local_shell' },
  { type: 'shell' },
  { type: 'custom', name: 'run_sql', format: { type: 'text' } },
  {
    type: 'namespace',
    name: 'billing',
    description: 'Billing tools',
    tools: [{ type: 'function', name: 'refund' }],
  },
  { type: 'tool_search' },
  { type: 'web_search_preview' },
  { type: 'web_search_preview_2025_03_11' },
  { type: 'apply_patch' },
];

describe('tools', () => {
  it('takes every tool type of the document and sends it to the provider as it is', async () => {
    const response = await client.responses.create({
      model: 'gpt-4o',
      input: 'Hi',
      tools: EVERY_TOOL as any,
    });
    expect(response.status).toBe('completed');
    expect((openai.requests.at(-1)!.body as any).tools.map((tool: any) => tool.type)).toEqual(
      EVERY_TOOL.map((tool) => tool.type),
    );
  });

  it('refuses a tool type the document does not list, naming tools[i].type and the known types', async () => {
    const error = await refusal({
      tools: [EVERY_TOOL[0], { type: 'web_browser' }],
    });
    expect(error.param).toBe('tools[1].type');
    expect(error.message).toMatch(/tools\[1\]\.type must be one of 'function', 'file_search'/);
    expect(error.message).toMatch(/'web_search_preview_2025_03_11'/);
    expect((await refusal({ tools: [{ name: 'f' }] })).param).toBe('tools[0].type');
    expect((await refusal({ tools: [{ type: 7 }] })).param).toBe('tools[0].type');
    expect(openai.requests).toHaveLength(0);
  });

  it("checks each tool type's required fields, naming the field", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: 'function' }, 'tools[0].name'],
      [{ type: 'mcp', server_url: 'https://mcp.example.com' }, 'tools[0].server_label'],
      [{ type: 'mcp', server_label: 5 }, 'tools[0].server_label'],
      [{ type: 'file_search' }, 'tools[0].vector_store_ids'],
      [{ type: 'code_interpreter' }, 'tools[0].container'],
      [{ type: 'code_interpreter', container: { type: 'manual' } }, 'tools[0].container.type'],
      [{ type: 'computer_use_preview', display_width: 1024, display_height: 768 }, 'tools[0].environment'],
      [
        { type: 'computer_use_preview', environment: 'amiga', display_width: 1024, display_height: 768 },
        'tools[0].environment',
      ],
      [{ type: 'computer_use_preview', environment: 'mac', display_width: 1024 }, 'tools[0].display_height'],
      [{ type: 'custom' }, 'tools[0].name'],
      [{ type: 'custom', name: 'sql', format: { type: 'grammar' } }, 'tools[0].format.syntax'],
      [{ type: 'namespace', name: 'billing', description: 'Billing' }, 'tools[0].tools'],
      [
        { type: 'namespace', name: 'billing', description: 'Billing', tools: [{ type: 'web_search' }] },
        'tools[0].tools[0].type',
      ],
      [{ type: 'web_search', search_context_size: 'huge' }, 'tools[0].search_context_size'],
    ];
    for (const [tool, param] of cases) {
      expect((await refusal({ tools: [tool] })).param, JSON.stringify(tool)).toBe(param);
    }
    expect(openai.requests).toHaveLength(0);
  });
});

describe('tool_choice', () => {
  const weather = { type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: false };
  /** The same fake as a chat provider: the request is translated, and tool_choice goes only with tools. */
  const translated = () =>
    gatewayOpenAI(gateway, { provider: 'groq', api_key: 'gsk-oai', custom_host: openai.url });

  it('refuses required without tools, as OpenAI does, on a native and a translated target alike', async () => {
    // OpenAI: 400 "Tool choice 'required' must be specified with 'tools' parameter.". Translated, the choice
    // was dropped with the tools and the model answered without calling any.
    for (const body of [{ tool_choice: 'required' }, { tool_choice: 'required', tools: [] }]) {
      const error = await refusal(body);
      expect(error.param).toBe('tool_choice');
      expect(error.message).toContain('tool_choice');
      const viaChat: any = await translated()
        .responses.create({ model: 'llama-3.3-70b-versatile', input: 'Hi', ...body } as any)
        .catch((err: unknown) => err);
      expect(viaChat).toBeInstanceOf(OpenAI.BadRequestError);
      expect(viaChat.param).toBe('tool_choice');
    }
    expect(openai.requests).toHaveLength(0);
  });

  it('refuses a function choice naming no function of tools, naming tool_choice.name', async () => {
    for (const tools of [undefined, [weather], [{ type: 'web_search' }]]) {
      const body = { tool_choice: { type: 'function', name: 'get_time' }, ...(tools && { tools }) };
      const error = await refusal(body);
      expect(error.param, JSON.stringify(body)).toBe('tool_choice.name');
      expect(error.message).toContain('get_time');
    }
    expect(openai.requests).toHaveLength(0);
  });

  it('takes a function choice naming one of the tools, a namespace’s too, and auto or none without tools', async () => {
    const namespace = {
      type: 'namespace',
      name: 'clock',
      description: 'Clock tools',
      tools: [{ type: 'function', name: 'get_time' }],
    };
    for (const body of [
      { tools: [weather], tool_choice: { type: 'function', name: 'get_weather' } },
      { tools: [weather, namespace], tool_choice: { type: 'function', name: 'get_time' } },
      { tool_choice: 'auto' },
      { tool_choice: 'none' },
      { tools: [weather], tool_choice: 'required' },
    ]) {
      const response = await client.responses.create({ model: 'gpt-4o', input: 'Hi', ...body } as any);
      expect(response.status, JSON.stringify(body)).toBe('completed');
    }
  });
});

const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const PDF =
  'data:application/pdf;base64,JVBERi0xLjQKJcfsj6IKMSAwIG9iago8PD4+CmVuZG9iagp0cmFpbGVyCjw8Pj4KJSVFT0YK';

/** A user message of a text part and `part`, the part thus at `input[0].content[1]`. */
const withPart = (part: Record<string, unknown>) => ({
  input: [{ role: 'user', content: [{ type: 'input_text', text: 'Look' }, part] }],
});

describe('input parts', () => {
  it('takes an input_image by http(s) URL, data: URL of an image or file_id, with any detail the document lists', async () => {
    const parts = [
      { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'high' },
      { type: 'input_image', image_url: 'http://example.com/cat.png?size=2', detail: 'low' },
      { type: 'input_image', image_url: PNG, detail: 'original' },
      { type: 'input_image', file_id: 'file-abc', detail: 'auto' },
      { type: 'input_image', image_url: 'HTTPS://EXAMPLE.COM/CAT.PNG', detail: null },
    ];
    for (const part of parts) {
      const response = await client.responses.create({ model: 'gpt-4o', ...withPart(part) } as any);
      expect(response.status, JSON.stringify(part)).toBe('completed');
      // Stored and sent with its detail, `auto` when it had none (as the input item list shows it).
      expect((openai.requests.at(-1)!.body as any).input[0].content[1]).toEqual({
        ...part,
        detail: part.detail ?? 'auto',
      });
    }
  });

  it('refuses an input_image whose image_url is no http(s) or image data: URL, or that has neither it nor a file_id', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: 'input_image', image_url: 'cat.png' }, 'input[0].content[1].image_url'],
      [{ type: 'input_image', image_url: 'ftp://example.com/cat.png' }, 'input[0].content[1].image_url'],
      [{ type: 'input_image', image_url: 'file:///etc/passwd' }, 'input[0].content[1].image_url'],
      [{ type: 'input_image', image_url: 'https://' }, 'input[0].content[1].image_url'],
      [{ type: 'input_image', image_url: PDF }, 'input[0].content[1].image_url'],
      [{ type: 'input_image', image_url: 'data:image/png,notbase64' }, 'input[0].content[1].image_url'],
      [
        { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'max' },
        'input[0].content[1].detail',
      ],
      [{ type: 'input_image', detail: 'auto' }, 'input[0].content[1]'],
      [{ type: 'input_image', image_url: null, file_id: null }, 'input[0].content[1]'],
    ];
    for (const [part, param] of cases) {
      const error = await refusal(withPart(part));
      expect(error.param, JSON.stringify(part)).toBe(param);
    }
    const error = await refusal(withPart({ type: 'input_image', image_url: 'ftp://example.com/cat.png' }));
    expect(error.message).toMatch(/http\(s\) URL or a data: URL of an image/);
    expect(openai.requests).toHaveLength(0);
  });

  it('takes an input_file by file_id, file_url or file_data, and refuses one with none of them', async () => {
    const parts = [
      { type: 'input_file', file_id: 'file-abc' },
      { type: 'input_file', file_url: 'https://example.com/report.pdf', detail: 'low' },
      { type: 'input_file', file_data: PDF, filename: 'report.pdf' },
    ];
    for (const part of parts) {
      const response = await client.responses.create({ model: 'gpt-4o', ...withPart(part) } as any);
      expect(response.status, JSON.stringify(part)).toBe('completed');
      expect((openai.requests.at(-1)!.body as any).input[0].content[1]).toEqual(part);
    }
    openai.reset();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: 'input_file', filename: 'report.pdf' }, 'input[0].content[1]'],
      [{ type: 'input_file', file_id: null }, 'input[0].content[1]'],
      [{ type: 'input_file', file_url: 'report.pdf' }, 'input[0].content[1].file_url'],
      [{ type: 'input_file', file_id: 'file-abc', detail: 'original' }, 'input[0].content[1].detail'],
      [{ type: 'input_file', file_data: 5, filename: 'a.pdf' }, 'input[0].content[1].file_data'],
    ];
    for (const [part, param] of cases) {
      const error = await refusal(withPart(part));
      expect(error.param, JSON.stringify(part)).toBe(param);
    }
    expect(openai.requests).toHaveLength(0);
  });
});

describe('metadata', () => {
  it('counts its keys and values in characters (code points), as OpenAI does, not UTF-16 code units', async () => {
    const EMOJI = '\u{1F600}';
    const ok = { [EMOJI.repeat(64)]: EMOJI.repeat(512) };
    const response = await client.responses.create({ model: 'gpt-4o', input: 'Hi', metadata: ok });
    expect(response.metadata).toEqual(ok);
    expect((await client.responses.retrieve(response.id)).metadata).toEqual(ok);
    const key = await refusal({ metadata: { [EMOJI.repeat(65)]: 'v' } });
    expect(key.param).toBe(`metadata.${EMOJI.repeat(65)}`);
    const value = await refusal({ metadata: { k: EMOJI.repeat(513) } });
    expect(value).toMatchObject({
      param: 'metadata.k',
      message: 'metadata.k must be at most 512 characters',
    });
  });
});
