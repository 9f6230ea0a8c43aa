/**
 * `default.addPrefix` {prefix, applyToRole, addToExisting, onlyIfEmpty}: a mutator on the request, as the
 * reference gateway's, that puts `prefix` before a chat's or a completion's text and passes.
 *
 * A chat: the first message of `applyToRole` (default `user`) gets the prefix before its content
 * (`addToExisting`, the default), or a message of that role holding the prefix alone is put before it
 * (`addToExisting: false`); with `onlyIfEmpty`, a chat that has a message of that role is left as it is. A
 * chat with no message of that role gets one: a system message first, any other role last. A completion:
 * the prompt, or each prompt of a batch, gets the prefix (token arrays are not text and are left alone).
 * Other calls (embeddings, and Messages and Responses calls, which the reference gateway leaves alone too)
 * pass unchanged.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../built-in-check.js';

type Json = Record<string, unknown>;

const RoleSchema = Type.Union([
  Type.Literal('system'),
  Type.Literal('developer'),
  Type.Literal('user'),
  Type.Literal('assistant'),
]);

interface Placement {
  prefix: string;
  role: string;
  addToExisting: boolean;
  onlyIfEmpty: boolean;
}

/** The chat's messages with the prefix placed, or undefined when they stay as they are. */
function prefixedMessages(messages: readonly unknown[], p: Placement): unknown[] | undefined {
  const index = messages.findIndex((message) => isJson(message) && message.role === p.role);
  const own = { role: p.role, content: p.prefix };
  if (index === -1) return p.role === 'system' ? [own, ...messages] : [...messages, own];
  if (p.onlyIfEmpty) return undefined;
  if (!p.addToExisting) return [...messages.slice(0, index), own, ...messages.slice(index)];
  const target = messages[index] as Json;
  return messages.map((message, i) =>
    i === index ? { ...target, content: prefixedContent(target.content, p.prefix) } : message,
  );
}

/** A message's content with the prefix before it: a string's start, or its first part's text. */
function prefixedContent(content: unknown, prefix: string): unknown {
  if (typeof content === 'string') return prefix + content;
  if (Array.isArray(content)) {
    const first: unknown = content[0];
    if (isJson(first) && first.type === 'text' && typeof first.text === 'string') {
      return [{ ...first, text: prefix + first.text }, ...content.slice(1)];
    }
    return [{ type: 'text', text: prefix }, ...content];
  }
  return prefix;
}

function prefixedPrompt(prompt: unknown, prefix: string): unknown {
  if (typeof prompt === 'string') return prefix + prompt;
  if (Array.isArray(prompt) && prompt.some((item) => typeof item === 'string')) {
    return prompt.map((item) => (typeof item === 'string' ? prefix + item : item));
  }
  return undefined;
}

export const addPrefix = defineCheck({
  id: 'addPrefix',
  events: ['beforeRequestHook'],
  parameters: Type.Object(
    {
      prefix: Type.String({ minLength: 1 }),
      applyToRole: Type.Optional(RoleSchema),
      addToExisting: Type.Optional(Type.Boolean()),
      onlyIfEmpty: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  run(ctx, parameters) {
    const placement: Placement = {
      prefix: parameters.prefix,
      role: parameters.applyToRole ?? 'user',
      addToExisting: parameters.addToExisting !== false,
      onlyIfEmpty: parameters.onlyIfEmpty === true,
    };
    const data = {
      applyToRole: placement.role,
      addToExisting: placement.addToExisting,
      onlyIfEmpty: placement.onlyIfEmpty,
    };
    const body = ctx.request.json;
    let transformed: Json | undefined;
    if (ctx.callType === 'chatComplete' && Array.isArray(body.messages)) {
      const messages = prefixedMessages(body.messages, placement);
      if (messages !== undefined) transformed = { ...body, messages };
    } else if (ctx.callType === 'complete') {
      const prompt = prefixedPrompt(body.prompt, placement.prefix);
      if (prompt !== undefined) transformed = { ...body, prompt };
    }
    if (transformed === undefined) {
      return {
        verdict: true,
        explanation: 'The request was left as it is.',
        data: { ...data, added: false },
      };
    }
    return {
      verdict: true,
      explanation: 'The prefix was added to the request.',
      data: { ...data, added: true },
      transformed,
    };
  },
});

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
