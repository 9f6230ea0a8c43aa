/**
 * A streamed answer as output checks see it: the chunks assembled into the JSON answer of the same
 * operation (a chat completion or a text completion; for a stream relayed natively, an Anthropic Message
 * or a Response), and a mutator's rewritten answer put back into the same chunks (each choice's — each
 * text block's, each message item's — new text in its first text chunk, the rest of its text chunks
 * emptied, a Response's `…done` events carrying the new text whole), so the client gets the stream it
 * asked for, with its ids, finish reasons and usage unchanged. Function-call arguments are read and put
 * back the same way: whole in the call's first argument delta (streamed-tool-calls.ts for chat; a
 * Message's `tool_use` input from its `input_json_delta`s).
 */
import { isMessagesStreamEvent, type MessagesStreamEvent } from '../../core/messages-types.js';
import type { ChatCompletionChunk, TextCompletion } from '../../core/openai-types.js';
import { isResponsesStreamEvent, type ResponsesStreamEvent } from '../../core/responses-types.js';
import { visitChunkText } from '../chunk-text.js';
import type { AnswerChunk, OpenAIChunk } from '../sink.js';
import { assembleToolCalls, rewriteToolCallArguments } from './streamed-tool-calls.js';

type Json = Record<string, unknown>;

function isChat(chunk: OpenAIChunk): chunk is ChatCompletionChunk {
  return chunk.object === 'chat.completion.chunk';
}

/** The chunks as the JSON answer of their kind. */
export function assembleAnswer(chunks: readonly AnswerChunk[]): Json {
  const first = chunks[0];
  if (first !== undefined && isResponsesStreamEvent(first)) {
    return assembleResponse(chunks as readonly ResponsesStreamEvent[]);
  }
  if (first !== undefined && isMessagesStreamEvent(first)) {
    return assembleMessage(chunks as readonly MessagesStreamEvent[]);
  }
  return assembleOpenAIAnswer(chunks as readonly OpenAIChunk[]);
}

/** The chunks carrying `answer`'s text in place of their own. */
export function rewriteChunks(chunks: readonly AnswerChunk[], answer: Json): AnswerChunk[] {
  const first = chunks[0];
  if (first !== undefined && isResponsesStreamEvent(first)) {
    return rewriteResponseEvents(chunks as readonly ResponsesStreamEvent[], answer);
  }
  if (first !== undefined && isMessagesStreamEvent(first)) {
    return rewriteMessageEvents(chunks as readonly MessagesStreamEvent[], answer);
  }
  return rewriteOpenAIChunks(chunks as readonly OpenAIChunk[], answer);
}

/**
 * A continued stream's answer as the client has it (steps/continuation-step.ts): `sent`, what it held
 * before this target took over, before choice 0's text, so that output checks judge the whole answer.
 */
export function withSentText(answer: Json, sent: string): Json {
  return mapChoiceZeroText(answer, (text) => sent + text) ?? answer;
}

/**
 * What a rewrite of a continued answer leaves for the continuation's chunks: the rewritten text after
 * `sent`; undefined when the rewrite changed `sent`, which the client already has.
 */
export function withoutSentText(answer: Json, sent: string): Json | undefined {
  return mapChoiceZeroText(answer, (text) => (text.startsWith(sent) ? text.slice(sent.length) : undefined));
}

/** The answer with choice 0's text (a message's content, a completion's text) mapped; undefined when
 * `map` refuses it. */
function mapChoiceZeroText(answer: Json, map: (text: string) => string | undefined): Json | undefined {
  const choices = Array.isArray(answer.choices) ? (answer.choices as Json[]) : [];
  let refused = false;
  const mapped = choices.map((choice, i) => {
    if ((typeof choice.index === 'number' ? choice.index : i) !== 0) return choice;
    const message = choice.message as Json | undefined;
    const text = message ? message.content : choice.text;
    const next = map(typeof text === 'string' ? text : '');
    if (next === undefined) {
      refused = true;
      return choice;
    }
    return message ? { ...choice, message: { ...message, content: next } } : { ...choice, text: next };
  });
  return refused ? undefined : { ...answer, choices: mapped };
}

function assembleOpenAIAnswer(chunks: readonly OpenAIChunk[]): Json {
  const first = chunks[0];
  const texts = new Map<number, string>();
  const finish = new Map<number, string | null>();
  let usage: unknown;
  for (const chunk of chunks) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      if (!texts.has(choice.index)) texts.set(choice.index, '');
      if (choice.finish_reason) finish.set(choice.index, choice.finish_reason);
    }
    visitChunkText(chunk, (index, piece, kind) => {
      if (kind === 'content') texts.set(index, (texts.get(index) ?? '') + piece);
    });
  }
  const indexes = [...texts.keys()].sort((a, b) => a - b);
  const chat = first === undefined || isChat(first);
  const toolCalls = chat ? assembleToolCalls(chunks as readonly ChatCompletionChunk[]) : new Map();
  return {
    id: first?.id,
    object: chat ? 'chat.completion' : 'text_completion',
    created: first?.created,
    model: first?.model,
    choices: indexes.map((index) =>
      chat
        ? {
            index,
            message: {
              role: 'assistant',
              content: texts.get(index) ?? '',
              ...(toolCalls.has(index) ? { tool_calls: toolCalls.get(index) } : {}),
            },
            finish_reason: finish.get(index) ?? null,
          }
        : { index, text: texts.get(index) ?? '', finish_reason: finish.get(index) ?? null },
    ),
    ...(usage ? { usage } : {}),
  };
}

/** Each choice's text in a rewritten answer, by index. */
function textsOf(answer: Json): Map<number, string> {
  const texts = new Map<number, string>();
  const choices = Array.isArray(answer.choices) ? (answer.choices as Json[]) : [];
  choices.forEach((choice, i) => {
    const index = typeof choice.index === 'number' ? choice.index : i;
    const message = choice.message as { content?: unknown } | undefined;
    const text = message ? message.content : choice.text;
    if (typeof text === 'string') texts.set(index, text);
  });
  return texts;
}

function rewriteOpenAIChunks(chunks: readonly OpenAIChunk[], answer: Json): OpenAIChunk[] {
  const first = chunks[0];
  const rewritten = rewriteOpenAITexts(chunks, answer);
  if (first === undefined || !isChat(first)) return rewritten;
  return rewriteToolCallArguments(rewritten as ChatCompletionChunk[], answer);
}

function rewriteOpenAITexts(chunks: readonly OpenAIChunk[], answer: Json): OpenAIChunk[] {
  const texts = textsOf(answer);
  const placed = new Set<number>();
  return chunks.map((chunk) => {
    let changed = false;
    // Each choice's content in this chunk, read as every reader of a chunk's text reads it.
    const pieces = new Map<number, string>();
    visitChunkText(chunk, (index, piece, kind) => {
      if (kind === 'content') pieces.set(index, piece);
    });
    const choices = chunk.choices.map((choice) => {
      const replacement = texts.get(choice.index);
      const piece = pieces.get(choice.index);
      if (replacement === undefined || piece === undefined || piece.length === 0) return choice;
      changed = true;
      const text = placed.has(choice.index) ? '' : replacement;
      placed.add(choice.index);
      // Where visitChunkText read it from: the delta when there is one, else the choice's text.
      const { delta } = choice as { delta?: ChatCompletionChunk['choices'][number]['delta'] | null };
      return delta ? { ...choice, delta: { ...delta, content: text } } : { ...choice, text };
    });
    return changed ? ({ ...chunk, choices } as ChatCompletionChunk | TextCompletion) : chunk;
  });
}

/** An Anthropic Messages stream as its Message: one entry of `content` per block, in block order. */
function assembleMessage(events: readonly MessagesStreamEvent[]): Json {
  const blocks = new Map<number, Json>();
  /** A tool_use block's input, from its JSON deltas. */
  const inputs = new Map<number, string>();
  let message: Json = {};
  let stopReason: unknown = null;
  for (const event of events) {
    if (event.type === 'message_start') message = { ...event.message };
    else if (event.type === 'content_block_start') blocks.set(event.index, { ...event.content_block });
    else if (event.type === 'content_block_delta') {
      const block = blocks.get(event.index) ?? { type: 'text', text: '' };
      blocks.set(event.index, block);
      const delta = event.delta;
      if (delta.type === 'text_delta')
        block.text = `${typeof block.text === 'string' ? block.text : ''}${delta.text}`;
      if (delta.type === 'thinking_delta') {
        block.thinking = `${typeof block.thinking === 'string' ? block.thinking : ''}${delta.thinking}`;
      }
      if (delta.type === 'input_json_delta') {
        inputs.set(event.index, (inputs.get(event.index) ?? '') + delta.partial_json);
      }
    } else if (event.type === 'message_delta') stopReason = event.delta.stop_reason;
  }
  for (const [index, json] of inputs) {
    const block = blocks.get(index);
    if (block && json !== '') block.input = parsedOr(json);
  }
  const content = [...blocks.keys()].sort((a, b) => a - b).map((index) => blocks.get(index));
  return { ...message, type: 'message', content, stop_reason: stopReason };
}

/** JSON text as its value; text that is not JSON (a stream cut mid-way) stays text, which checks still read. */
function parsedOr(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return json;
  }
}

/** The events carrying a rewritten Message's text: each text block's in its first text delta, and each
 * tool_use block's input, as JSON text, whole in its first input delta (the later ones emptied). */
function rewriteMessageEvents(events: readonly MessagesStreamEvent[], answer: Json): AnswerChunk[] {
  const content = Array.isArray(answer.content) ? (answer.content as Json[]) : [];
  const order = [
    ...new Set(events.flatMap((e) => ('index' in e && e.type === 'content_block_start' ? [e.index] : []))),
  ];
  const texts = new Map<number, string>();
  const inputs = new Map<number, string>();
  order
    .sort((a, b) => a - b)
    .forEach((index, position) => {
      const block = content[position];
      if (typeof block?.text === 'string') texts.set(index, block.text);
      else if (block?.type === 'tool_use' && block.input !== undefined) {
        inputs.set(index, typeof block.input === 'string' ? block.input : JSON.stringify(block.input));
      }
    });
  const placed = new Set<number>();
  return events.map((event) => {
    if (event.type !== 'content_block_delta') return event;
    const { delta } = event;
    const replacement = delta.type === 'text_delta' ? texts.get(event.index) : inputs.get(event.index);
    if (replacement === undefined || (delta.type !== 'text_delta' && delta.type !== 'input_json_delta')) {
      return event;
    }
    const whole = placed.has(event.index) ? '' : replacement;
    placed.add(event.index);
    return delta.type === 'text_delta'
      ? { ...event, delta: { ...delta, text: whole } }
      : { ...event, delta: { ...delta, partial_json: whole } };
  });
}

/** A Responses stream as its Response: the output items by index, a message's text from its deltas. */
function assembleResponse(events: readonly ResponsesStreamEvent[]): Json {
  const items = new Map<number, Json>();
  const texts = new Map<number, string>();
  /** A function call's arguments, from its deltas (or its `…done` event, which repeats them whole). */
  const args = new Map<number, string>();
  let response: Json = {};
  for (const event of events) {
    const index = typeof event.output_index === 'number' ? event.output_index : undefined;
    if (event.type === 'response.created' && typeof event.response === 'object') {
      response = { ...(event.response as Json) };
    } else if (event.type === 'response.output_item.added' && index !== undefined) {
      items.set(index, { ...(event.item as Json) });
    } else if (event.type === 'response.output_text.delta' && index !== undefined) {
      texts.set(index, (texts.get(index) ?? '') + (typeof event.delta === 'string' ? event.delta : ''));
    } else if (event.type === 'response.function_call_arguments.delta' && index !== undefined) {
      args.set(index, (args.get(index) ?? '') + (typeof event.delta === 'string' ? event.delta : ''));
    } else if (event.type === 'response.function_call_arguments.done' && index !== undefined) {
      const whole = (event as { arguments?: unknown }).arguments;
      if (typeof whole === 'string') args.set(index, whole);
    }
  }
  const output = [...items.keys()]
    .sort((a, b) => a - b)
    .map((index) => {
      const item = items.get(index)!;
      const text = texts.get(index);
      const callArguments = args.get(index);
      if (callArguments !== undefined) return { ...item, arguments: callArguments };
      return text === undefined
        ? item
        : { ...item, content: [{ type: 'output_text', text, annotations: [] }] };
    });
  return { ...response, object: 'response', output };
}

/** The events carrying a rewritten Response's text: each message item's in its first text delta and,
 * whole, in its `…done` events; each function call's arguments likewise. */
function rewriteResponseEvents(events: readonly ResponsesStreamEvent[], answer: Json): AnswerChunk[] {
  // The assembled output lists the items in output-index order: the rewrite's items match them by position.
  const indexes = [
    ...new Set(
      events.flatMap((e) =>
        e.type === 'response.output_item.added' && typeof e.output_index === 'number' ? [e.output_index] : [],
      ),
    ),
  ].sort((a, b) => a - b);
  const output = Array.isArray(answer.output) ? (answer.output as Json[]) : [];
  const texts = new Map<number, string>();
  const args = new Map<number, string>();
  indexes.forEach((index, position) => {
    const item = output[position];
    if (item?.type === 'function_call' && typeof item.arguments === 'string') {
      args.set(index, item.arguments);
      return;
    }
    const parts = item?.content;
    const part = Array.isArray(parts) ? (parts as Json[]).find((p) => typeof p.text === 'string') : undefined;
    if (part) texts.set(index, part.text as string);
  });
  const placed = new Set<number>();
  return events.map((event) => {
    const index = typeof event.output_index === 'number' ? event.output_index : undefined;
    if (index === undefined) return event;
    const callArguments = args.get(index);
    if (callArguments !== undefined) return withArguments(event, callArguments, placed);
    const text = texts.get(index);
    if (text === undefined) return event;
    switch (event.type) {
      case 'response.output_text.delta': {
        const delta = placed.has(index!) ? '' : text;
        placed.add(index!);
        return { ...event, delta };
      }
      case 'response.output_text.done':
        return { ...event, text };
      case 'response.content_part.done':
        return { ...event, part: { ...(event as { part?: Json }).part, text } };
      case 'response.output_item.done': {
        const item = event.item as Json;
        const content = Array.isArray(item.content)
          ? (item.content as Json[]).map((part) => (typeof part.text === 'string' ? { ...part, text } : part))
          : item.content;
        return { ...event, item: { ...item, content } };
      }
      default:
        return event;
    }
  });
}

/** A function call's event carrying the rewritten arguments: whole in its first delta (the later ones
 * emptied, so the client assembles exactly the rewrite), in its `…done` event and its finished item. */
function withArguments(event: ResponsesStreamEvent, args: string, placed: Set<number>): ResponsesStreamEvent {
  const index = event.output_index as number;
  switch (event.type) {
    case 'response.function_call_arguments.delta': {
      const delta = placed.has(index) ? '' : args;
      placed.add(index);
      return { ...event, delta };
    }
    case 'response.function_call_arguments.done': {
      const done: ResponsesStreamEvent & { arguments: string } = { ...event, arguments: args };
      return done;
    }
    case 'response.output_item.done':
      return { ...event, item: { ...(event.item as Json), arguments: args } };
    default:
      return event;
  }
}
