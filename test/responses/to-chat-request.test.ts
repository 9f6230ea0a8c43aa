// The translation of a Responses request into the canonical chat request, on its own: every item kind,
// the turns they gather into, and what is refused.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import { validateResponsesRequest } from '../../src/core/schemas/responses-request.js';
import { inputItemsOf } from '../../src/gateway/responses/response-call.js';
import { clientTerms, type MessageOrigin } from '../../src/gateway/responses/item-paths.js';
import { responsesParam } from '../../src/gateway/responses/responses-param.js';
import { toChatRequest } from '../../src/gateway/responses/to-chat-request.js';

function translate(body: Record<string, unknown>) {
  const request = validateResponsesRequest({ model: 'm', ...body });
  return toChatRequest(request, inputItemsOf(request.input));
}

function refusal(body: Record<string, unknown>): GatewayError {
  try {
    translate(body);
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected a GatewayError');
}

describe('toChatRequest', () => {
  it('gathers reasoning, text and calls into one assistant turn, outputs into tool messages', () => {
    const chat = translate({
      instructions: 'Be brief.',
      input: [
        { role: 'developer', content: 'Use metric units.' },
        {
          role: 'user',
          content: [{ type: 'input_file', file_data: 'data:application/pdf;base64,AA==', filename: 'a.pdf' }],
        },
        {
          type: 'reasoning',
          summary: [],
          content: [{ type: 'reasoning_text', text: 'think' }],
          encrypted_content: 'sig',
        },
        { role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"a":1}' },
        { type: 'function_call', call_id: 'c2', name: 'g', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'one' },
        { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'two' }] },
      ],
      reasoning: { effort: 'high' },
      max_output_tokens: 20000,
      text: { format: { type: 'json_object' } },
      tool_choice: { type: 'function', name: 'f' },
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }],
      parallel_tool_calls: false,
    });
    expect(chat).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'system', content: 'Use metric units.' },
        {
          role: 'user',
          content: [
            { type: 'file', file: { file_data: 'data:application/pdf;base64,AA==', filename: 'a.pdf' } },
          ],
        },
        {
          role: 'assistant',
          content: [{ type: 'text', text: 'Checking.' }],
          content_blocks: [{ type: 'thinking', thinking: 'think', signature: 'sig' }],
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
            { id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'one' },
        { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: 'two' }] },
      ],
      max_completion_tokens: 20000,
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      parallel_tool_calls: false,
      tool_choice: { type: 'function', function: { name: 'f' } },
      response_format: { type: 'json_object' },
      thinking: { type: 'enabled', budget_tokens: 16384 },
    });
  });

  it('gives every input item an id and text content as input_text parts', () => {
    const items = inputItemsOf([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { type: 'function_call_output', call_id: 'c', output: 'x' },
    ]);
    expect(items.map((item) => item.id.split('_')[0])).toEqual(['msg', 'msg', 'fco']);
    expect(items[0]).toMatchObject({ type: 'message', content: [{ type: 'input_text', text: 'hi' }] });
    expect(items[1]).toMatchObject({ type: 'message', content: [{ type: 'output_text', text: 'hello' }] });
  });

  it("sends an image's detail as chat's, original (which chat has not) as high", () => {
    const image = (detail: string | null) => ({
      type: 'input_image',
      image_url: 'https://example.com/cat.png',
      detail,
    });
    const chat = translate({
      input: [{ role: 'user', content: [image('original'), image('low'), image(null)] }],
    });
    expect(chat.messages[0]!.content).toEqual([
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'high' } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
      // Stored with OpenAI's default, `auto`, which the input item list shows.
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'auto' } },
    ]);
  });

  it('refuses built-in tools, file-id images, and turns reasoning effort none into thinking disabled', () => {
    const builtIn = refusal({
      input: 'x',
      tools: [
        { type: 'computer_use_preview', environment: 'browser', display_width: 1024, display_height: 768 },
      ],
    });
    expect(builtIn).toMatchObject({ status: 400, param: 'tools[0].type' });
    expect(builtIn.message).toContain('computer_use_preview');
    expect(
      refusal({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] }),
    ).toMatchObject({
      status: 400,
      param: 'input[0].content[0].image_url',
    });
    expect(translate({ input: 'x', reasoning: { effort: 'none' } }).thinking).toEqual({ type: 'disabled' });
    // A tool message carries text: an image a function returned is not sent as its JSON.
    const image = refusal({
      input: [
        { type: 'function_call', call_id: 'c', name: 'shot', arguments: '{}' },
        {
          type: 'function_call_output',
          call_id: 'c',
          output: [{ type: 'input_image', image_url: 'data:image/png;base64,AA==' }],
        },
      ],
    });
    expect(image).toMatchObject({ status: 400, param: 'input[1].output[0]' });
    expect(image.message).toContain('input_image');
  });

  it('keeps the thinking budget under max_output_tokens, which bounds thinking and answer together', () => {
    // Claude refuses a budget that is not below max_tokens (max_tokens must be greater than budget_tokens).
    expect(translate({ input: 'x', reasoning: { effort: 'high' }, max_output_tokens: 4000 })).toMatchObject({
      max_completion_tokens: 4000,
      thinking: { type: 'enabled', budget_tokens: 3999 },
    });
    expect(translate({ input: 'x', reasoning: { effort: 'low' }, max_output_tokens: 4000 }).thinking).toEqual(
      {
        type: 'enabled',
        budget_tokens: 2048,
      },
    );
    expect(translate({ input: 'x', reasoning: { effort: 'xhigh' } }).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 32768,
    });
    // OpenAI's effort above xhigh: no larger budget, which most models that think in tokens could not take.
    expect(translate({ input: 'x', reasoning: { effort: 'max' } }).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 32768,
    });
    // Never below the least budget a thinking provider takes.
    expect(
      translate({ input: 'x', reasoning: { effort: 'medium' }, max_output_tokens: 600 }).thinking,
    ).toEqual({
      type: 'enabled',
      budget_tokens: 1024,
    });
  });

  it('refuses a tool_choice other than a function, which chat cannot say, naming it', () => {
    const tools = [{ type: 'function', name: 'get_weather' }];
    const mcp = refusal({ input: 'x', tools, tool_choice: { type: 'mcp', server_label: 'deepwiki' } });
    expect(mcp).toMatchObject({ status: 400, param: 'tool_choice.type' });
    expect(mcp.message).toContain('mcp');
    expect(
      translate({ input: 'x', tools, tool_choice: { type: 'function', name: 'get_weather' } }).tool_choice,
    ).toEqual({ type: 'function', function: { name: 'get_weather' } });
  });

  it("names the Responses field a chat request's field was made from", () => {
    expect(responsesParam('messages')).toBe('input');
    expect(responsesParam('messages[3].content[0].image_url')).toBe('input');
    expect(responsesParam('max_completion_tokens')).toBe('max_output_tokens');
    expect(responsesParam('response_format')).toBe('text.format');
    expect(responsesParam('response_format.json_schema.schema.properties')).toBe(
      'text.format.schema.properties',
    );
    expect(responsesParam('thinking.budget_tokens')).toBe('reasoning.effort');
    expect(responsesParam('tools[1].function.parameters')).toBe('tools[1].parameters');
    expect(responsesParam('tool_choice.function.name')).toBe('tool_choice.name');
    expect(responsesParam('temperature')).toBeUndefined();
  });

  it("names the input item a chat message's field was made from, and the client's index of it", () => {
    const request = validateResponsesRequest({
      model: 'm',
      instructions: 'Be brief.',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'a' },
            { type: 'input_image', image_url: 'https://example.com/u.png' },
          ],
        },
        { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 't' }] },
        { role: 'assistant', content: [{ type: 'output_text', text: 'b' }] },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'function_call', call_id: 'c2', name: 'g', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'x' }] },
        { role: 'developer', content: [{ type: 'input_text', text: 'd' }] },
      ],
    });
    const origins: MessageOrigin[] = [];
    toChatRequest(request, inputItemsOf(request.input), origins);
    const named = (param: string) => responsesParam(param, origins);
    expect(named('messages[0].content')).toBe('instructions');
    expect(named('messages[1].content[1].image_url.url')).toBe('input[0].content[1].image_url');
    expect(named('messages[1].content[1].image_url.detail')).toBe('input[0].content[1].detail');
    expect(named('messages[2].content[0].text')).toBe('input[2].content[0].text');
    expect(named('messages[2].content_blocks[0].signature')).toBe('input[1]');
    expect(named('messages[2].tool_calls[1].function.arguments')).toBe('input[4].arguments');
    expect(named('messages[2].tool_calls[0].id')).toBe('input[3].call_id');
    expect(named('messages[3].content[0].text')).toBe('input[5].output[0].text');
    expect(named('messages[3].tool_call_id')).toBe('input[5].call_id');
    expect(named('messages[4].content')).toBe('input[6].content');
    expect(named('messages')).toBe('input');
    expect(named('messages[9].content')).toBe('input');
    // The pipeline's index less the offset of the client's first item; before it, the stored conversation.
    expect(clientTerms('input[5].output[0]', 3)).toEqual({
      param: 'input[2].output[0]',
      text: 'input[2].output[0]',
    });
    expect(clientTerms('input[1].content[0].image_url', 3)).toEqual({
      param: 'previous_response_id',
      text: 'content[0].image_url of item 1 of the conversation of previous_response_id',
    });
    expect(clientTerms('input[1]', null)).toEqual({ param: 'input', text: 'input[1]' });
    expect(clientTerms('tools[0].type', 3)).toEqual({ param: 'tools[0].type', text: 'tools[0].type' });
  });

  it("sends an allowed_tools choice of function tools as chat's, which the adapters apply", () => {
    const tools = [
      { type: 'function', name: 'get_weather' },
      { type: 'function', name: 'get_time' },
    ];
    const chat = translate({
      input: 'x',
      tools,
      tool_choice: {
        type: 'allowed_tools',
        mode: 'required',
        tools: [{ type: 'function', name: 'get_time' }],
      },
    });
    expect(chat.tools?.map((tool) => tool.function.name)).toEqual(['get_weather', 'get_time']);
    expect(chat.tool_choice).toEqual({
      type: 'allowed_tools',
      allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'get_time' } }] },
    });
    const builtIn = refusal({
      input: 'x',
      tools,
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'image_generation' }] },
    });
    expect(builtIn).toMatchObject({ status: 400, param: 'tool_choice.tools[0].type' });
  });
});
