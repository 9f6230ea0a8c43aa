// The Responses event grammar made of chat chunks, on its own: a refusal streamed as refusal events, usage
// from the trailing usage chunk, and a failure closing what was open; every event checked against the
// OpenAPI document.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import type { ChatCompletionChunk } from '../../src/core/openai-types.js';
import { ResponseAssembler } from '../../src/gateway/responses/response-assembler.js';
import { prepareResponseCall } from '../../src/gateway/responses/response-call.js';
import type { ResponseEvent } from '../../src/gateway/responses/response-types.js';
import type { Store } from '../../src/store/types.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';

async function assembler(): Promise<ResponseAssembler> {
  // No previous_response_id: the store is not read.
  const { shell } = await prepareResponseCall({} as Store, 'ws', { model: 'gpt-4o', input: 'Hi' });
  return new ResponseAssembler(shell);
}

function chunk(
  delta: ChatCompletionChunk['choices'][0]['delta'],
  finish: 'stop' | null = null,
): ChatCompletionChunk {
  return {
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4o-2024',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function validAndNumbered(events: ResponseEvent[]): string[] {
  for (const event of events) expectOpenAPIValid('ResponseStreamEvent', event);
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  return events.map((e) => e.type);
}

describe('ResponseAssembler', () => {
  it('streams a refusal as refusal events in a message of its own', async () => {
    const a = await assembler();
    const events = [
      ...a.push(chunk({ role: 'assistant', content: '' })),
      ...a.push(chunk({ refusal: "I can't " })),
      ...a.push(chunk({ refusal: 'help with that.' })),
      ...a.push(chunk({}, 'stop')),
      ...a.push({
        ...chunk({}),
        choices: [],
        usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
      }),
    ];
    const { events: closing, response } = a.finish();
    expect(validAndNumbered([...events, ...closing])).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.refusal.delta',
      'response.refusal.delta',
      'response.refusal.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(response.output).toMatchObject([
      {
        type: 'message',
        status: 'completed',
        content: [{ type: 'refusal', refusal: "I can't help with that." }],
      },
    ]);
    expect(response.model).toBe('gpt-4o-2024');
    expect(response.usage).toMatchObject({ input_tokens: 5, output_tokens: 4, total_tokens: 9 });
    expectOpenAPIValid('Response', response);
    expect(a.finish().response).toBe(response);
  });

  it.each(['length', 'content_filter'] as const)(
    'marks the item a %s stop cut as incomplete, whole answer or streamed alike',
    async (reason) => {
      const call = { index: 0, id: 'call_1', type: 'function' as const };
      const whole = (await assembler()).fromCompletion({
        id: 'c',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4o',
        choices: [
          {
            index: 0,
            finish_reason: reason,
            logprobs: null,
            message: {
              role: 'assistant',
              content: 'Checking.',
              refusal: null,
              tool_calls: [
                { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"city": "Par' } },
              ],
            },
          },
        ],
      });
      const streamed = await assembler();
      streamed.push(chunk({ content: 'Checking.' }));
      streamed.push(
        chunk({ tool_calls: [{ ...call, function: { name: 'f', arguments: '{"city": "Par' } }] }),
      );
      streamed.push({ ...chunk({}), choices: [{ index: 0, delta: {}, finish_reason: reason }] });
      for (const response of [whole, streamed.finish().response]) {
        expect(response.status).toBe('incomplete');
        expect(response.output.map((item) => [item.type, item.status])).toEqual([
          ['message', 'completed'],
          ['function_call', 'incomplete'],
        ]);
      }
    },
  );

  it('opens a stream that had no chunk at all before its terminal event', async () => {
    const { events, response } = (await assembler()).finish();
    expect(validAndNumbered(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.completed',
    ]);
    expect(response).toMatchObject({ status: 'completed', output: [] });
  });

  it('closes what is open and ends with response.failed when the answer breaks', async () => {
    const a = await assembler();
    const events = [...a.push(chunk({ content: 'Hel' })), ...a.push(chunk({ content: 'lo' }))];
    const { events: closing, response } = a.fail(new GatewayError('upstream_unreachable', 'gone'));
    expect(validAndNumbered([...events, ...closing]).slice(-5)).toEqual([
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.failed',
    ]);
    expect(response).toMatchObject({ status: 'failed', error: { code: 'server_error', message: 'gone' } });
    expect(response.output).toMatchObject([
      { type: 'message', content: [{ type: 'output_text', text: 'Hello' }] },
    ]);
  });
});
