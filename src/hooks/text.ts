/**
 * How the text a check reads is drawn from a request or answer body, and how a mutator (`default.pii` with
 * `redact`) writes text back.
 *
 * `text` (what `CheckContext.request.text` / `response.text` hold) follows what the seed's users expect:
 * - chatComplete request: the last message's content (a string, or the `text` of its text parts joined by
 *   a newline); answer: the first choice's `message.content`;
 * - complete request: the prompt (an array's strings joined by a newline); answer: the first choice's `text`;
 * - embed request: the input (likewise); an embeddings answer has no text: `''`.
 * Token arrays (numbers) are not text and are skipped. A body without text is read as `''`, which a text
 * check gives no verdict on (built-in-check.ts, `checkedText`).
 *
 * The other APIs' bodies read the same way: a Responses request's `input` (a string, or items read as
 * messages, a `function_call_output` as its output), an Anthropic Messages request's `messages` (a
 * `tool_result` block as its content); an answer that is an Anthropic Message (its text
 * blocks) or a Response (the `output_text` of its message items).
 *
 * Every text, by contrast (`allRequestTexts`, `mapRequestTexts` …), covers every message, every content
 * part, the function-call arguments of every tool call, every prompt and input string, and every choice,
 * so a check that must see all of the body (PII) and a rewrite that must leave nothing behind do. That
 * includes what the natively relayed APIs carry beside their turns: a Messages request's `system` prompt,
 * a Responses request's `instructions`, Anthropic's `tool_result` contents and the string values of a
 * `tool_use` block's `input` (an object, where chat has arguments as JSON text).
 */
import type { HookRequestType } from './check-types.js';

type Json = Record<string, unknown>;

/** Rewrites one text; returns it unchanged to leave it as it was. */
export type TextRewrite = (text: string) => string;

export function requestText(requestType: HookRequestType, body: Json): string {
  switch (requestType) {
    case 'chatComplete': {
      const messages = body.messages ?? inputAsMessages(body.input);
      if (!Array.isArray(messages) || messages.length === 0) return '';
      const last = asObject(messages[messages.length - 1]);
      // A Responses tool output is its `output`, as a chat tool message's is its content.
      return contentText(last?.type === 'function_call_output' ? last.output : last?.content);
    }
    case 'complete':
      return stringsOf(body.prompt).join('\n');
    case 'embed':
      return stringsOf(body.input).join('\n');
  }
}

export function answerText(requestType: HookRequestType, body: Json): string {
  if (requestType === 'embed') return '';
  if (isMessagesAnswer(body)) return messagesAnswerTexts(body).join('');
  if (isResponsesAnswer(body)) return responsesAnswerTexts(body).join('');
  const first = Array.isArray(body.choices) ? asObject(body.choices[0]) : undefined;
  if (first === undefined) return '';
  if (requestType === 'complete') return typeof first.text === 'string' ? first.text : '';
  return contentText(asObject(first.message)?.content);
}

/** A copy of the request body with every text passed through `rewrite`; the body itself is not changed. */
export function mapRequestTexts(requestType: HookRequestType, body: Json, rewrite: TextRewrite): Json {
  switch (requestType) {
    case 'chatComplete': {
      // The system prompt or instructions first: placeholders are numbered in the order the model reads.
      const head = mapInstructions(body, rewrite);
      if (Array.isArray(body.messages)) {
        return { ...head, messages: body.messages.map((message) => mapMessage(message, rewrite)) };
      }
      if (typeof body.input === 'string') return { ...head, input: rewrite(body.input) };
      if (Array.isArray(body.input)) {
        return { ...head, input: body.input.map((item) => mapInputItem(item, rewrite)) };
      }
      return head;
    }
    case 'complete':
      return 'prompt' in body ? { ...body, prompt: mapStrings(body.prompt, rewrite) } : body;
    case 'embed':
      return 'input' in body ? { ...body, input: mapStrings(body.input, rewrite) } : body;
  }
}

/** A copy of the answer body with the text of every choice passed through `rewrite`. */
export function mapAnswerTexts(requestType: HookRequestType, body: Json, rewrite: TextRewrite): Json {
  if (requestType === 'embed') return body;
  if (isMessagesAnswer(body)) {
    return { ...body, content: (body.content as unknown[]).map((block) => mapPart(block, rewrite)) };
  }
  if (isResponsesAnswer(body)) {
    return { ...body, output: (body.output as unknown[]).map((item) => mapOutputItem(item, rewrite)) };
  }
  if (!Array.isArray(body.choices)) return body;
  const choices = body.choices.map((item: unknown) => {
    const choice = asObject(item);
    if (choice === undefined) return item;
    if (requestType === 'complete') {
      return typeof choice.text === 'string' ? { ...choice, text: rewrite(choice.text) } : choice;
    }
    return 'message' in choice ? { ...choice, message: mapMessage(choice.message, rewrite) } : choice;
  });
  return { ...body, choices };
}

export function allRequestTexts(requestType: HookRequestType, body: Json): string[] {
  const texts: string[] = [];
  mapRequestTexts(requestType, body, collectInto(texts));
  return texts;
}

export function allAnswerTexts(requestType: HookRequestType, body: Json): string[] {
  const texts: string[] = [];
  mapAnswerTexts(requestType, body, collectInto(texts));
  return texts;
}

function collectInto(texts: string[]): TextRewrite {
  return (text) => {
    texts.push(text);
    return text;
  };
}

/** An Anthropic Message (`/v1/messages` answered natively). */
function isMessagesAnswer(body: Json): boolean {
  return body.type === 'message' && Array.isArray(body.content);
}

/** A Response (`/v1/responses` answered natively). */
function isResponsesAnswer(body: Json): boolean {
  return body.object === 'response' && Array.isArray(body.output);
}

function messagesAnswerTexts(body: Json): string[] {
  const texts: string[] = [];
  for (const block of body.content as unknown[]) {
    const part = asObject(block);
    if (part?.type === 'text' && typeof part.text === 'string') texts.push(part.text);
  }
  return texts;
}

function responsesAnswerTexts(body: Json): string[] {
  const texts: string[] = [];
  for (const entry of body.output as unknown[]) {
    const item = asObject(entry);
    if (item?.type !== 'message' || !Array.isArray(item.content)) continue;
    for (const part of item.content) {
      const text = asObject(part);
      if (text?.type === 'output_text' && typeof text.text === 'string') texts.push(text.text);
    }
  }
  return texts;
}

/** A Responses input as messages: a string is one user message; items keep their role and content. */
function inputAsMessages(input: unknown): unknown {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  return input;
}

/** An Anthropic Messages request's `system` (a string or text blocks), a Responses request's `instructions`. */
function mapInstructions(body: Json, rewrite: TextRewrite): Json {
  let mapped = body;
  if (body.system !== undefined) mapped = { ...mapped, system: mapContent(body.system, rewrite) };
  if (typeof body.instructions === 'string') mapped = { ...mapped, instructions: rewrite(body.instructions) };
  return mapped;
}

/** A Responses input item: a message's texts, a tool output, a function call's arguments. */
function mapInputItem(item: unknown, rewrite: TextRewrite): unknown {
  const entry = asObject(item);
  if (entry === undefined) return item;
  if (entry.type === 'function_call_output' && entry.output !== undefined) {
    return { ...entry, output: mapContent(entry.output, rewrite) };
  }
  if (entry.type === 'function_call' && typeof entry.arguments === 'string') {
    return { ...entry, arguments: rewrite(entry.arguments) };
  }
  return mapMessage(entry, rewrite);
}

/** A Response's output item: a message's texts, a function call's arguments. */
function mapOutputItem(item: unknown, rewrite: TextRewrite): unknown {
  const entry = asObject(item);
  if (entry === undefined) return item;
  if (entry.type === 'function_call' && typeof entry.arguments === 'string') {
    return { ...entry, arguments: rewrite(entry.arguments) };
  }
  if (entry.type === 'message' && Array.isArray(entry.content)) {
    return { ...entry, content: entry.content.map((part) => mapPart(part, rewrite)) };
  }
  return item;
}

/** A content's text: a string, or its text parts joined by a newline; an Anthropic `tool_result` block
 * reads as its own content, as a chat tool message's content is read. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const item of content) {
    const part = asObject(item);
    const text = part?.type === 'tool_result' ? contentText(part.content) : part?.text;
    if (typeof text === 'string' && text !== '') texts.push(text);
  }
  return texts.join('\n');
}

function mapMessage(item: unknown, rewrite: TextRewrite): unknown {
  const message = asObject(item);
  if (message === undefined) return item;
  const mapped: Json = { ...message };
  if (message.content !== undefined) mapped.content = mapContent(message.content, rewrite);
  if (Array.isArray(message.tool_calls)) {
    mapped.tool_calls = message.tool_calls.map((call) => mapToolCall(call, rewrite));
  }
  return mapped;
}

/** A content: a string, or parts; anything else is left as it is. */
function mapContent(content: unknown, rewrite: TextRewrite): unknown {
  if (typeof content === 'string') return rewrite(content);
  return Array.isArray(content) ? content.map((part) => mapPart(part, rewrite)) : content;
}

function mapPart(item: unknown, rewrite: TextRewrite): unknown {
  const part = asObject(item);
  if (part === undefined) return item;
  if (typeof part.text === 'string') return { ...part, text: rewrite(part.text) };
  // Anthropic's blocks: a tool's result sent back (a string or blocks), and a tool call's input, an object
  // where chat has its arguments as JSON text.
  if (part.type === 'tool_result' && part.content !== undefined) {
    return { ...part, content: mapContent(part.content, rewrite) };
  }
  if (part.type === 'tool_use' && part.input !== undefined) {
    return { ...part, input: mapStringValues(part.input, rewrite) };
  }
  return item;
}

/** A JSON value with every string in it, at any depth, passed through `rewrite`; keys are left as they are. */
function mapStringValues(value: unknown, rewrite: TextRewrite): unknown {
  if (typeof value === 'string') return rewrite(value);
  if (Array.isArray(value)) return value.map((item: unknown) => mapStringValues(item, rewrite));
  const object = asObject(value);
  if (object === undefined) return value;
  const mapped: Json = {};
  for (const [key, item] of Object.entries(object)) mapped[key] = mapStringValues(item, rewrite);
  return mapped;
}

/** Tool-call arguments are JSON text the model wrote or the client sends back: PII travels there too. */
function mapToolCall(item: unknown, rewrite: TextRewrite): unknown {
  const call = asObject(item);
  const fn = asObject(call?.function);
  if (call === undefined || fn === undefined || typeof fn.arguments !== 'string') return item;
  return { ...call, function: { ...fn, arguments: rewrite(fn.arguments) } };
}

function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value)) return [];
  return value.filter((item): item is string => typeof item === 'string');
}

function mapStrings(value: unknown, rewrite: TextRewrite): unknown {
  if (typeof value === 'string') return rewrite(value);
  if (!Array.isArray(value)) return value;
  return value.map((item: unknown) => (typeof item === 'string' ? rewrite(item) : item));
}

function asObject(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}
