/**
 * How the text a check reads is drawn from a request or answer body, and how a mutator (`default.pii` with
 * `redact`) writes text back.
 *
 * `text` (what `CheckContext.request.text` / `response.text` hold) follows what the seed's users expect:
 * - chatComplete request: the last message's content (a string, or the `text` of its text parts joined by
 *   a newline); answer: the first choice's `message.content`;
 * - complete request: the prompt (an array's strings joined by a newline); answer: the first choice's `text`;
 * - embed request: the input (likewise); an embeddings answer has no text: `''`.
 * Token arrays (numbers) are not text and are skipped. A body without text is read as `''`.
 *
 * Every text, by contrast (`allRequestTexts`, `mapRequestTexts` …), covers every message, every content
 * part, the function-call arguments of every tool call, every prompt and input string, and every choice,
 * so a check that must see all of the body (PII) and a rewrite that must leave nothing behind do.
 */
import type { HookRequestType } from './check-types.js';

type Json = Record<string, unknown>;

/** Rewrites one text; returns it unchanged to leave it as it was. */
export type TextRewrite = (text: string) => string;

export function requestText(requestType: HookRequestType, body: Json): string {
  switch (requestType) {
    case 'chatComplete': {
      const messages = body.messages;
      if (!Array.isArray(messages) || messages.length === 0) return '';
      return contentText(asObject(messages[messages.length - 1])?.content);
    }
    case 'complete':
      return stringsOf(body.prompt).join('\n');
    case 'embed':
      return stringsOf(body.input).join('\n');
  }
}

export function answerText(requestType: HookRequestType, body: Json): string {
  if (requestType === 'embed') return '';
  const first = Array.isArray(body.choices) ? asObject(body.choices[0]) : undefined;
  if (first === undefined) return '';
  if (requestType === 'complete') return typeof first.text === 'string' ? first.text : '';
  return contentText(asObject(first.message)?.content);
}

/** A copy of the request body with every text passed through `rewrite`; the body itself is not changed. */
export function mapRequestTexts(requestType: HookRequestType, body: Json, rewrite: TextRewrite): Json {
  switch (requestType) {
    case 'chatComplete':
      return Array.isArray(body.messages)
        ? { ...body, messages: body.messages.map((message) => mapMessage(message, rewrite)) }
        : body;
    case 'complete':
      return 'prompt' in body ? { ...body, prompt: mapStrings(body.prompt, rewrite) } : body;
    case 'embed':
      return 'input' in body ? { ...body, input: mapStrings(body.input, rewrite) } : body;
  }
}

/** A copy of the answer body with the text of every choice passed through `rewrite`. */
export function mapAnswerTexts(requestType: HookRequestType, body: Json, rewrite: TextRewrite): Json {
  if (requestType === 'embed' || !Array.isArray(body.choices)) return body;
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

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content) {
    const text = asObject(part)?.text;
    if (typeof text === 'string' && text !== '') texts.push(text);
  }
  return texts.join('\n');
}

function mapMessage(item: unknown, rewrite: TextRewrite): unknown {
  const message = asObject(item);
  if (message === undefined) return item;
  const mapped: Json = { ...message };
  if (typeof message.content === 'string') mapped.content = rewrite(message.content);
  else if (Array.isArray(message.content)) mapped.content = message.content.map((p) => mapPart(p, rewrite));
  if (Array.isArray(message.tool_calls)) {
    mapped.tool_calls = message.tool_calls.map((call) => mapToolCall(call, rewrite));
  }
  return mapped;
}

function mapPart(item: unknown, rewrite: TextRewrite): unknown {
  const part = asObject(item);
  return part !== undefined && typeof part.text === 'string' ? { ...part, text: rewrite(part.text) } : item;
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
