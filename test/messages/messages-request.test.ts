// The Messages request at the boundary (every refusal names its field) and its translation to chat for
// providers without the API (what is carried, what is refused and named).
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import { validateMessagesCountTokensRequest, validateMessagesRequest } from '../../src/core/schemas/index.js';
import {
  messagesParam,
  messagesToChat,
  translateMessages,
} from '../../src/gateway/messages/messages-to-chat.js';

const base = { model: 'claude-opus-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] };

function refusal(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('not refused');
}

const toolResult = (content: unknown) => ({
  ...base,
  messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content }] }],
});

describe('validation', () => {
  it.each([
    [{ ...base, max_tokens: undefined }, 'max_tokens'],
    [{ ...base, model: '' }, 'model'],
    [{ ...base, messages: undefined }, 'messages'],
    [{ ...base, messages: [] }, 'messages'],
    [{ ...base, messages: [{ role: 'user', content: [] }] }, 'messages[0].content'],
    [{ ...base, messages: [{ role: 'user', content: '' }] }, 'messages[0].content'],
    [
      {
        ...base,
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: [] },
          { role: 'user', content: 'Again' },
        ],
      },
      'messages[1].content',
    ],
    [{ ...base, messages: [{ role: 'system', content: 'x' }] }, 'messages[0].role'],
    [
      { ...base, messages: [{ role: 'user', content: [{ text: 'no type' }] }] },
      'messages[0].content[0].type',
    ],
    [{ ...base, messages: [{ role: 'user', content: [{ type: 'text' }] }] }, 'messages[0].content[0].text'],
    [
      { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] },
      'messages[0].content[0].tool_use_id',
    ],
    [
      { ...base, messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'hm' }] }] },
      'messages[0].content[0].signature',
    ],
    // A tool result's content: a string, or blocks checked as any other.
    [toolResult({ a: 1 }), 'messages[0].content[0].content'],
    [toolResult([null]), 'messages[0].content[0].content[0]'],
    [toolResult([{ text: 'no type' }]), 'messages[0].content[0].content[0].type'],
    [toolResult([{ type: 'text' }]), 'messages[0].content[0].content[0].text'],
    [
      {
        ...base,
        messages: [
          { role: 'user', content: [{ type: 'document', source: { type: 'content', content: [null] } }] },
        ],
      },
      'messages[0].content[0].source.content[0]',
    ],
    [{ ...base, system: [{ type: 'image', source: {} }] }, 'system[0].type'],
    [{ ...base, temperature: 1.5 }, 'temperature'],
    [{ ...base, tool_choice: { type: 'tool' } }, 'tool_choice.name'],
    [{ ...base, tool_choice: { type: 'sometimes' } }, 'tool_choice.type'],
    [{ ...base, thinking: { type: 'enabled' } }, 'thinking.budget_tokens'],
    [{ ...base, stop_sequences: 'END' }, 'stop_sequences'],
    [{ ...base, stream: 'yes' }, 'stream'],
    [
      {
        ...base,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'x' } }] }],
      },
      'messages[0].content[0].cache_control.type',
    ],
    [{ ...base, cache_control: { type: 'x' } }, 'cache_control.type'],
  ])('refuses %j naming %s', (body, param) => {
    const error = refusal(() => validateMessagesRequest(body));
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message).toContain(param);
  });

  // With interleaved thinking (Claude 4's beta flag, the default of later models) the budget is the whole
  // turn's, across its thinking blocks, and may exceed max_tokens; Anthropic judges it, knowing the model.
  it('takes a thinking budget at or above max_tokens', () => {
    const body = { ...base, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 16000 } };
    expect(validateMessagesRequest(body).thinking).toEqual({ type: 'enabled', budget_tokens: 16000 });
  });

  // Anthropic's toolsets (computer_toolset_20260801, browser_toolset_20260801) have a type and no name.
  it('takes a tool without a name when it is not a custom one, and names the field of a custom one', () => {
    const tools = [{ type: 'computer_toolset_20260801', configs: null }];
    expect(validateMessagesRequest({ ...base, tools }).tools).toEqual(tools);
    for (const tool of [{ input_schema: { type: 'object' } }, { type: 'custom', input_schema: {} }]) {
      expect(refusal(() => validateMessagesRequest({ ...base, tools: [tool] })).param).toBe('tools[0].name');
    }
  });

  // Thinking types Anthropic adds (between_tools) reach it; a translated call has budgets only.
  it('takes a thinking type it does not know, and leaves it out of a translated call', () => {
    const request = validateMessagesRequest({ ...base, thinking: { type: 'between_tools' } });
    expect(request.thinking).toEqual({ type: 'between_tools' });
    expect(messagesToChat(request)).not.toHaveProperty('thinking');
  });

  it('takes an empty final assistant message (a prefill), as Anthropic does', () => {
    for (const content of ['', []]) {
      const messages = [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content },
      ];
      expect(validateMessagesRequest({ ...base, messages }).messages).toHaveLength(2);
    }
  });

  it('lets unknown fields and block types through for the native providers', () => {
    const body = {
      ...base,
      context_management: { edits: [] },
      messages: [
        { role: 'user', content: [{ type: 'search_result', source: 'x', title: 't', content: [] }] },
      ],
    };
    expect(validateMessagesRequest(body)).toEqual(body);
  });

  it('takes a count_tokens body without max_tokens', () => {
    const { max_tokens: _unused, ...body } = base;
    expect(validateMessagesCountTokensRequest(body)).toEqual(body);
  });
});

describe('translation to chat', () => {
  it('carries images as image_url parts', () => {
    const chat = messagesToChat(
      validateMessagesRequest({
        ...base,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
            ],
          },
        ],
      }),
    );
    expect(chat.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
        ],
      },
    ]);
  });

  // A PDF is the chat API's file part (OpenAI, Gemini, Bedrock and Claude read it); a plain-text or
  // content-block document is its text and images.
  it('carries documents as file parts (PDF) and as their text and images', () => {
    const chat = messagesToChat(
      validateMessagesRequest({
        ...base,
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'document',
                title: 'report.pdf',
                source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
                cache_control: { type: 'ephemeral' },
                citations: { enabled: true },
              },
              { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' } },
              { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Plain text.' } },
              {
                type: 'document',
                source: {
                  type: 'content',
                  content: [
                    { type: 'text', text: 'First part.' },
                    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
                  ],
                },
              },
              { type: 'document', source: { type: 'content', content: 'Content as a string.' } },
              { type: 'text', text: 'Summarise them.' },
            ],
          },
        ],
      }),
    );
    expect(chat.messages).toEqual([
      {
        role: 'user',
        content: [
          {
            type: 'file',
            file: { filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
          },
          { type: 'file', file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBE' } },
          { type: 'text', text: 'Plain text.' },
          { type: 'text', text: 'First part.' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          { type: 'text', text: 'Content as a string.' },
          { type: 'text', text: 'Summarise them.' },
        ],
      },
    ]);
  });

  // A chat tool message is text only: a tool result's images (a screenshot, a chart) go in the user message
  // that follows the tool messages, before the user's own content.
  it("carries a tool result's images in the user message after the tool messages", () => {
    const png = { type: 'base64', media_type: 'image/png', data: 'AAAA' };
    const { body, origins } = translateMessages(
      validateMessagesRequest({
        ...base,
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'toolu_1',
                content: [
                  { type: 'text', text: 'Screenshot taken.' },
                  { type: 'image', source: png },
                ],
              },
              { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'image', source: png }] },
              { type: 'text', text: 'What do you see?' },
            ],
          },
        ],
      }),
    );
    const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } };
    expect(body.messages).toEqual([
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Screenshot taken.' },
      { role: 'tool', tool_call_id: 'toolu_2', content: '' },
      { role: 'user', content: [image, image, { type: 'text', text: 'What do you see?' }] },
    ]);
    expect(messagesParam('messages[2].content[1].image_url.url', origins)).toBe(
      'messages[0].content[1].content[0].source',
    );
    expect(messagesParam('messages[2].content[2]', origins)).toBe('messages[0].content[2]');
  });

  it('names the chat part a provider refuses by the document it came from', () => {
    const { origins } = translateMessages(
      validateMessagesRequest({
        ...base,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Read:' },
              { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' } },
            ],
          },
        ],
      }),
    );
    expect(messagesParam('messages[0].content[1].file', origins)).toBe('messages[0].content[1].source');
    expect(messagesParam('messages[0].content[1].file.file_data', origins)).toBe(
      'messages[0].content[1].source',
    );
  });

  it.each([
    [{ ...base, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools[0].type'],
    [
      {
        ...base,
        messages: [
          {
            role: 'user',
            content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }],
          },
        ],
      },
      'messages[0].content[0].source.type',
    ],
    [
      {
        ...base,
        messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'f' } }] }],
      },
      'messages[0].content[0].source.type',
    ],
    [
      {
        ...base,
        messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', data: 'x' } }] }],
      },
      'messages[0].content[0].source.media_type',
    ],
    [
      {
        ...base,
        messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }],
      },
      'messages[0].content[0].source.type',
    ],
    [
      {
        ...base,
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 't',
                content: [{ type: 'search_result', source: 's', title: 't', content: [] }],
              },
            ],
          },
        ],
      },
      'messages[0].content[0].content[0].type',
    ],
    [
      {
        ...base,
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 't',
                content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }],
              },
            ],
          },
        ],
      },
      'messages[0].content[0].content[0].source.type',
    ],
    // Anthropic's MCP connector: the servers' tools, which Anthropic calls, are not offered by chat.
    [
      { ...base, mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'example' }] },
      'mcp_servers',
    ],
  ])('refuses %j naming %s', (body, param) => {
    const error = refusal(() => messagesToChat(validateMessagesRequest(body)));
    expect(error.param).toBe(param);
    expect(error.message).toContain(param);
  });

  // The bound is the target's (OpenAI's chat takes 4): without one known, the provider judges.
  it('refuses more stop_sequences than the target takes, naming stop_sequences', () => {
    const body = validateMessagesRequest({ ...base, stop_sequences: ['a', 'b', 'c', 'd', 'e'] });
    const error = refusal(() => messagesToChat(body, { stopSequences: 4 }));
    expect(error.param).toBe('stop_sequences');
    expect(error.message).toContain('stop_sequences');
    expect(messagesToChat(body, { stopSequences: 5 }).stop).toHaveLength(5);
    expect(messagesToChat(body).stop).toHaveLength(5);
  });

  it('maps tool_choice and the parallel switch', () => {
    const tools = [{ name: 'f', input_schema: { type: 'object' } }];
    expect(
      messagesToChat(validateMessagesRequest({ ...base, tools, tool_choice: { type: 'tool', name: 'f' } })),
    ).toMatchObject({ tool_choice: { type: 'function', function: { name: 'f' } } });
    expect(
      messagesToChat(
        validateMessagesRequest({
          ...base,
          tools,
          tool_choice: { type: 'auto', disable_parallel_tool_use: true },
        }),
      ),
    ).toMatchObject({ tool_choice: 'auto', parallel_tool_calls: false });
  });

  // Anthropic's strict tool use (inputs that follow the schema) is OpenAI's strict function calling.
  it("carries a tool's strict as the function's strict", () => {
    const schema = { type: 'object', properties: {}, additionalProperties: false };
    const chat = messagesToChat(
      validateMessagesRequest({
        ...base,
        tools: [
          { name: 'f', input_schema: schema, strict: true },
          { name: 'g', input_schema: schema, strict: false },
          { name: 'h', input_schema: schema },
        ],
      }),
    );
    expect(chat.tools?.map((tool) => (tool as { function: object }).function)).toEqual([
      { name: 'f', parameters: schema, strict: true },
      { name: 'g', parameters: schema, strict: false },
      { name: 'h', parameters: schema },
    ]);
  });

  // Anthropic takes an empty tools list as none; OpenAI refuses one (400 empty_array), and a tool_choice
  // without tools.
  it('sends no tools and no tool_choice for an empty tools list', () => {
    const chat = messagesToChat(
      validateMessagesRequest({
        ...base,
        tools: [],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      }),
    ) as Record<string, unknown>;
    expect(chat).not.toHaveProperty('tools');
    expect(chat).not.toHaveProperty('tool_choice');
    expect(chat).not.toHaveProperty('parallel_tool_calls');
  });

  // Anthropic refuses a tool_choice that must call a tool when there is none to call.
  it.each([
    [{ type: 'any' }, undefined],
    [{ type: 'tool', name: 'f' }, []],
  ])('refuses tool_choice %j without tools, naming tool_choice', (toolChoice, tools) => {
    const body = { ...base, tool_choice: toolChoice, ...(tools ? { tools } : {}) };
    const error = refusal(() => messagesToChat(validateMessagesRequest(body)));
    expect({ param: error.param, status: error.status }).toEqual({ param: 'tool_choice', status: 400 });
    expect(error.message).toContain('tool_choice');
  });

  it('names the missing data or media type of a base64 image and the missing url of a url one', () => {
    const image = (source: unknown) => ({
      ...base,
      messages: [{ role: 'user', content: [{ type: 'image', source }] }],
    });
    for (const [source, param] of [
      [{ type: 'base64', media_type: 'image/png' }, 'messages[0].content[0].source.data'],
      [{ type: 'base64', data: 'AAAA' }, 'messages[0].content[0].source.media_type'],
      [{ type: 'url' }, 'messages[0].content[0].source.url'],
    ] as const) {
      const error = refusal(() => messagesToChat(validateMessagesRequest(image(source))));
      expect({ param: error.param, code: error.code }).toEqual({ param, code: 'invalid_body' });
      expect(error.message).toBe(`${param} is required for an image source of type ${source.type}`);
    }
  });

  it('names a block field that is missing, with the article its type takes', () => {
    const error = refusal(() =>
      validateMessagesRequest({ ...base, messages: [{ role: 'user', content: [{ type: 'image' }] }] }),
    );
    expect(error.message).toBe('messages[0].content[0].source is required for an image block');
    const text = refusal(() =>
      validateMessagesRequest({ ...base, messages: [{ role: 'user', content: [{ type: 'text' }] }] }),
    );
    expect(text.message).toBe('messages[0].content[0].text is required for a text block');
  });

  // Structured outputs: the answer must follow the schema, on every provider or none.
  it('carries output_config.format (and the beta output_format) as a json_schema response_format', () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    };
    const expected = { type: 'json_schema', json_schema: { name: 'output', schema } };
    expect(
      messagesToChat(
        validateMessagesRequest({ ...base, output_config: { format: { type: 'json_schema', schema } } }),
      ).response_format,
    ).toEqual(expected);
    expect(
      messagesToChat(validateMessagesRequest({ ...base, output_format: { type: 'json_schema', schema } }))
        .response_format,
    ).toEqual(expected);
    const error = refusal(() =>
      messagesToChat(validateMessagesRequest({ ...base, output_config: { format: { type: 'grammar' } } })),
    );
    expect(error.param).toBe('output_config.format.type');
    const missing = refusal(() =>
      validateMessagesRequest({ ...base, output_config: { format: { type: 'json_schema' } } }),
    );
    expect(missing.param).toBe('output_config.format.schema');
  });
});

describe('prompt-caching breakpoints', () => {
  const mark = { type: 'ephemeral' };
  const tool = { name: 'f', input_schema: { type: 'object', properties: {} } };
  /** A request with `explicit` breakpoints of its own (on a tool, the system prompt, then message blocks). */
  const withMarks = (explicit: number, extra: Record<string, unknown> = {}) => {
    const marked = (k: number) => (k < explicit ? { cache_control: mark } : {});
    return validateMessagesRequest({
      ...base,
      tools: [{ ...tool, ...marked(0) }],
      system: [{ type: 'text', text: 'Rules.', ...marked(1) }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Document.', ...marked(2) },
            { type: 'text', text: 'Appendix.', ...marked(3) },
            { type: 'text', text: 'Question?' },
          ],
        },
      ],
      ...extra,
    });
  };
  const chatMarks = (chat: unknown): number => (JSON.stringify(chat).match(/"cache_control"/g) ?? []).length;

  // Anthropic refuses a fifth breakpoint (400 "A maximum of 4 blocks with cache_control may be provided"),
  // wherever it is: on a tool, a system block, a message block or a block inside a tool result.
  it('refuses a fifth breakpoint of the request, naming it, on a message and on a count', () => {
    for (const validate of [validateMessagesRequest, validateMessagesCountTokensRequest]) {
      const fifth = refusal(() =>
        validate({
          ...base,
          tools: [{ ...tool, cache_control: mark }],
          system: [{ type: 'text', text: 'Rules.', cache_control: mark }],
          messages: [
            {
              role: 'user',
              content: [
                {
                  type: 'tool_result',
                  tool_use_id: 't',
                  content: [{ type: 'text', text: 'Result.', cache_control: mark }],
                  cache_control: mark,
                },
                { type: 'text', text: 'Question?', cache_control: mark },
              ],
            },
          ],
        }),
      );
      expect(fifth.status).toBe(400);
      expect(fifth.param).toBe('messages[0].content[1].cache_control');
      expect(fifth.message).toContain('a maximum of 4 blocks with cache_control');
    }
    expect(() => withMarks(4)).not.toThrow();
    // A request-level cache_control is not one of them: it is added only where a slot is left.
    expect(() => withMarks(4, { cache_control: mark })).not.toThrow();
  });

  // Anthropic reads tools, then system, then messages, and refuses a breakpoint kept an hour after one kept
  // five minutes (the default): "a ttl='1h' cache_control block must not come after a ttl='5m' one".
  it('refuses a breakpoint of a longer ttl after one of a shorter, naming it', () => {
    const hour = { type: 'ephemeral', ttl: '1h' };
    const late = refusal(() =>
      validateMessagesRequest({
        ...base,
        tools: [{ ...tool, cache_control: mark }],
        system: [{ type: 'text', text: 'Rules.', cache_control: hour }],
      }),
    );
    expect(late.status).toBe(400);
    expect(late.param).toBe('system[0].cache_control.ttl');
    expect(late.message).toContain("a ttl='1h' cache_control block must not come after a ttl='5m'");
    const inner = refusal(() =>
      validateMessagesCountTokensRequest({
        ...base,
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 't',
                content: [{ type: 'text', text: 'Result.', cache_control: { type: 'ephemeral', ttl: '5m' } }],
                cache_control: hour,
              },
            ],
          },
        ],
      }),
    );
    expect(inner.param).toBe('messages[0].content[0].cache_control.ttl');
    // Longer first, then shorter, is how it should be.
    expect(() =>
      validateMessagesRequest({
        ...base,
        tools: [{ ...tool, cache_control: hour }],
        system: [{ type: 'text', text: 'Rules.', cache_control: hour }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: mark }] }],
      }),
    ).not.toThrow();
  });

  // Automatic caching takes one of the request's 4 breakpoints: with the client's own 4 there is none left
  // for it (Anthropic and Bedrock refuse a fifth), and those 4 already cache the prompt.
  it('adds the automatic breakpoint only while the explicit ones leave it a slot', () => {
    const three = messagesToChat(withMarks(3, { cache_control: mark }), { cacheControl: true });
    expect(chatMarks(three)).toBe(4);
    expect((three.messages.at(-1)!.content as Array<Record<string, unknown>>).at(-1)).toEqual({
      type: 'text',
      text: 'Question?',
      cache_control: mark,
    });
    const four = messagesToChat(withMarks(4, { cache_control: mark }), { cacheControl: true });
    expect(chatMarks(four)).toBe(4);
    expect((four.messages.at(-1)!.content as Array<Record<string, unknown>>).at(-1)).toEqual({
      type: 'text',
      text: 'Question?',
    });
  });

  // The automatic breakpoint goes on the last block, after every explicit one: kept an hour, it would follow
  // a five-minute one, which Anthropic and Bedrock refuse. Where the gateway would place it, it refuses
  // the request first, naming the request-level field; a target that does not cache places none.
  it('refuses an automatic breakpoint kept longer than an explicit one before it', () => {
    const request = withMarks(1, { cache_control: { type: 'ephemeral', ttl: '1h' } });
    const error = refusal(() => messagesToChat(request, { cacheControl: true }));
    expect(error.status).toBe(400);
    expect(error.param).toBe('cache_control.ttl');
    expect(messagesToChat(request)).not.toHaveProperty('messages.1.content.2.cache_control');
    const hour = { type: 'ephemeral', ttl: '1h' };
    const longFirst = validateMessagesRequest({
      ...base,
      tools: [{ ...tool, cache_control: hour }],
      cache_control: hour,
    });
    expect(JSON.stringify(messagesToChat(longFirst, { cacheControl: true }))).toContain('"ttl":"1h"');
  });

  it('puts the automatic breakpoint before an empty prefill', () => {
    const chat = messagesToChat(
      validateMessagesRequest({
        ...base,
        cache_control: mark,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Long document.' }] },
          { role: 'assistant', content: '' },
        ],
      }),
      { cacheControl: true },
    );
    expect(chat.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Long document.', cache_control: mark }] },
      { role: 'assistant', content: '' },
    ]);
  });
});
