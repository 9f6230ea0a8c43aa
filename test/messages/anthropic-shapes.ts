// Anthropic's documented Messages shapes as JSON Schema (the Message object, every stream event, the error
// object, the count_tokens answer), and the stream grammar: message_start first, pings anywhere, each content
// block started, given deltas of its own kind and stopped before the next starts, indexes from 0 in order,
// one message_delta, then message_stop last. Written from Anthropic's API reference ("Messages",
// "Streaming Messages", "Errors", "Count tokens").
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { expect } from 'vitest';

const usage = {
  type: 'object',
  required: ['input_tokens', 'output_tokens'],
  properties: {
    input_tokens: { type: 'integer', minimum: 0 },
    output_tokens: { type: 'integer', minimum: 0 },
    cache_creation_input_tokens: { type: ['integer', 'null'], minimum: 0 },
    cache_read_input_tokens: { type: ['integer', 'null'], minimum: 0 },
    cache_creation: {
      type: ['object', 'null'],
      required: ['ephemeral_5m_input_tokens', 'ephemeral_1h_input_tokens'],
      properties: {
        ephemeral_5m_input_tokens: { type: 'integer', minimum: 0 },
        ephemeral_1h_input_tokens: { type: 'integer', minimum: 0 },
      },
      additionalProperties: false,
    },
  },
};

const stopReason = {
  enum: ['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', null],
};

const block = {
  type: 'object',
  required: ['type'],
  oneOf: [
    {
      properties: { type: { const: 'text' }, text: { type: 'string' } },
      required: ['text'],
    },
    {
      properties: {
        type: { const: 'thinking' },
        thinking: { type: 'string' },
        signature: { type: 'string' },
      },
      required: ['thinking', 'signature'],
    },
    {
      properties: { type: { const: 'redacted_thinking' }, data: { type: 'string' } },
      required: ['data'],
    },
    {
      properties: {
        type: { const: 'tool_use' },
        id: { type: 'string', minLength: 1 },
        name: { type: 'string', minLength: 1 },
        input: { type: 'object' },
      },
      required: ['id', 'name', 'input'],
    },
  ],
};

const message = {
  type: 'object',
  required: ['id', 'type', 'role', 'model', 'content', 'stop_reason', 'stop_sequence', 'usage'],
  properties: {
    id: { type: 'string', minLength: 1 },
    type: { const: 'message' },
    role: { const: 'assistant' },
    model: { type: 'string' },
    content: { type: 'array', items: block },
    stop_reason: stopReason,
    stop_sequence: { type: ['string', 'null'] },
    usage,
  },
};

const delta = {
  type: 'object',
  oneOf: [
    { properties: { type: { const: 'text_delta' }, text: { type: 'string' } }, required: ['type', 'text'] },
    {
      properties: { type: { const: 'input_json_delta' }, partial_json: { type: 'string' } },
      required: ['type', 'partial_json'],
    },
    {
      properties: { type: { const: 'thinking_delta' }, thinking: { type: 'string' } },
      required: ['type', 'thinking'],
    },
    {
      properties: { type: { const: 'signature_delta' }, signature: { type: 'string' } },
      required: ['type', 'signature'],
    },
  ],
};

const index = { type: 'integer', minimum: 0 };

const event = {
  type: 'object',
  required: ['type'],
  oneOf: [
    { properties: { type: { const: 'message_start' }, message }, required: ['message'] },
    {
      properties: { type: { const: 'content_block_start' }, index, content_block: block },
      required: ['index', 'content_block'],
    },
    {
      properties: { type: { const: 'content_block_delta' }, index, delta },
      required: ['index', 'delta'],
    },
    { properties: { type: { const: 'content_block_stop' }, index }, required: ['index'] },
    {
      properties: {
        type: { const: 'message_delta' },
        delta: {
          type: 'object',
          required: ['stop_reason'],
          properties: { stop_reason: stopReason, stop_sequence: { type: ['string', 'null'] } },
        },
        usage: {
          type: 'object',
          required: ['output_tokens'],
          properties: { output_tokens: { type: 'integer', minimum: 0 } },
        },
      },
      required: ['delta', 'usage'],
    },
    { properties: { type: { const: 'message_stop' } } },
    { properties: { type: { const: 'ping' } } },
  ],
};

const error = {
  type: 'object',
  required: ['type', 'error'],
  properties: {
    type: { const: 'error' },
    error: {
      type: 'object',
      required: ['type', 'message'],
      properties: {
        type: {
          enum: [
            'invalid_request_error',
            'authentication_error',
            'billing_error',
            'permission_error',
            'not_found_error',
            'request_too_large',
            'rate_limit_error',
            'api_error',
            'timeout_error',
            'overloaded_error',
          ],
        },
        message: { type: 'string', minLength: 1 },
      },
    },
  },
};

const countTokens = {
  type: 'object',
  required: ['input_tokens'],
  additionalProperties: false,
  properties: { input_tokens: { type: 'integer', minimum: 0 } },
};

const ajv = new Ajv2020({ allErrors: true, strict: false });
const validators: Record<string, ValidateFunction> = {
  Message: ajv.compile(message),
  MessageStreamEvent: ajv.compile(event),
  ErrorResponse: ajv.compile(error),
  CountTokensResponse: ajv.compile(countTokens),
};

export type AnthropicShape = keyof typeof validators;

export function expectAnthropicShape(shape: AnthropicShape, value: unknown): void {
  const validate = validators[shape];
  const valid = validate(value);
  expect(valid, `${shape}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 500)}`).toBe(
    true,
  );
}

export interface StreamEvent {
  type: string;
  index?: number;
  content_block?: { type: string };
  delta?: { type?: string };
  [key: string]: unknown;
}

const DELTA_FOR_BLOCK: Record<string, string[]> = {
  text: ['text_delta'],
  thinking: ['thinking_delta', 'signature_delta'],
  tool_use: ['input_json_delta'],
  redacted_thinking: [],
};

/** Every event valid and in Anthropic's order. */
export function expectMessagesGrammar(events: readonly StreamEvent[]): void {
  for (const e of events) expectAnthropicShape('MessageStreamEvent', e);
  const kinds = events.filter((e) => e.type !== 'ping');
  expect(kinds[0]?.type).toBe('message_start');
  expect(kinds.at(-1)?.type).toBe('message_stop');
  expect(kinds.at(-2)?.type).toBe('message_delta');
  expect(kinds.filter((e) => e.type === 'message_start')).toHaveLength(1);
  expect(kinds.filter((e) => e.type === 'message_delta')).toHaveLength(1);
  let open: { index: number; type: string } | undefined;
  let next = 0;
  for (const e of kinds.slice(1, -2)) {
    if (e.type === 'content_block_start') {
      expect(open, 'a block starts while another is open').toBeUndefined();
      expect(e.index).toBe(next);
      open = { index: e.index as number, type: e.content_block!.type };
      next += 1;
    } else if (e.type === 'content_block_delta') {
      expect(open?.index).toBe(e.index);
      expect(DELTA_FOR_BLOCK[open!.type] ?? []).toContain(e.delta!.type);
    } else if (e.type === 'content_block_stop') {
      expect(open?.index).toBe(e.index);
      open = undefined;
    } else {
      throw new Error(`unexpected ${e.type} inside the message`);
    }
  }
  expect(open, 'a block was never stopped').toBeUndefined();
}

export interface RawSse {
  status: number;
  headers: Headers;
  /** Each event's `event:` name and `data:` text, in order. */
  frames: Array<{ event: string; data: string }>;
}

/** Posts a body and reads the answer's server-sent events as they are on the wire. */
export async function postRawSse(
  url: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<RawSse> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const frames = text
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => {
      const lines = frame.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length) ?? '';
      const data = lines
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
        .join('\n');
      return { event, data };
    });
  return { status: response.status, headers: response.headers, frames };
}

/** The frames as events, each checked to carry its own type as the SSE event name. */
export function eventsOf(frames: RawSse['frames']): StreamEvent[] {
  return frames.map((frame) => {
    const parsed = JSON.parse(frame.data) as StreamEvent;
    expect(frame.event).toBe(parsed.type);
    return parsed;
  });
}
