/**
 * Continuing a streamed answer on another target after the first one broke mid-way. The client already
 * holds part of the answer; the next target is asked for the rest, and its chunks are rewritten into the
 * client's stream (same id, created and choice index; its own model), so the client sees one answer that
 * ends with [DONE].
 *
 * How the rest is asked for depends on the target: providers that accept an assistant prefill
 * (Anthropic-style) get the partial answer as the last, assistant, message and simply go on; OpenAI-wire
 * providers get the partial answer as an assistant message followed by a user message asking to continue
 * exactly where it stopped. Text completions append the partial text to the prompt.
 */
import type { ChatCompletionChunk } from '../../core/openai-types.js';
import type { EndpointKind } from '../../providers/types.js';
import type { StreamIdentity } from '../client-stream.js';

export const CONTINUE_INSTRUCTION =
  'Your previous answer was cut off. Continue it exactly where it stopped: do not repeat anything ' +
  'already written, do not add any preamble or commentary, and start with the very next characters.';

/** Whether a target takes a trailing assistant message as the beginning of its answer. */
export function acceptsAssistantPrefill(provider: string, model: string | undefined): boolean {
  if (provider === 'anthropic') return true;
  const name = (model ?? '').toLowerCase();
  if (provider === 'vertex-ai') return name.includes('claude');
  if (provider === 'bedrock') return name.includes('anthropic.') || name.includes('claude');
  return false;
}

export interface Continuation {
  /** The request body for the next target. */
  body: Record<string, unknown>;
  /** Rewrites the next target's chunks into the client's stream; undefined drops a chunk. */
  rewrite: (chunk: ChatCompletionChunk) => ChatCompletionChunk | undefined;
}

export interface PartialAnswer {
  endpoint: EndpointKind;
  /** The body the first target was sent (without the target's override_params). */
  body: Record<string, unknown>;
  /** The text the client has of choice 0. */
  text: string;
  identity: StreamIdentity | undefined;
  provider: string;
  /** The model the next target will be called with. */
  model: string | undefined;
}

/** Builds the continuation, or undefined when the request cannot be continued this way. */
export function buildContinuation(partial: PartialAnswer): Continuation | undefined {
  const { endpoint, body, text } = partial;
  if (endpoint === 'chat') {
    const messages = body.messages;
    if (!Array.isArray(messages)) return undefined;
    if (text === '') return { body, rewrite: continuationRewriter(partial.identity, '') };
    if (acceptsAssistantPrefill(partial.provider, partial.model)) {
      // A prefill must not end in whitespace (Anthropic refuses it); the client already has that
      // whitespace, so any the model repeats at its start is dropped.
      const prefill = text.trimEnd();
      if (prefill === '') return { body, rewrite: continuationRewriter(partial.identity, '') };
      return {
        body: { ...body, messages: [...messages, { role: 'assistant', content: prefill }] },
        rewrite: continuationRewriter(partial.identity, text.slice(prefill.length)),
      };
    }
    return {
      body: {
        ...body,
        messages: [
          ...messages,
          { role: 'assistant', content: text },
          { role: 'user', content: CONTINUE_INSTRUCTION },
        ],
      },
      rewrite: continuationRewriter(partial.identity, ''),
    };
  }
  if (endpoint === 'completions') {
    let prompt = body.prompt;
    if (Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === 'string') prompt = prompt[0];
    if (typeof prompt !== 'string') return undefined;
    const { echo: _echo, suffix: _suffix, ...rest } = body;
    return {
      body: { ...rest, prompt: prompt + text },
      rewrite: continuationRewriter(partial.identity, ''),
    };
  }
  return undefined;
}

/**
 * Rewrites chunks of the continuing stream: the first stream's id and created, choice index 0, no second
 * role delta. `trailingWhitespace` is whitespace the client has but the prefill did not carry; leading
 * whitespace of the continuation is dropped in that case so it is not doubled.
 */
export function continuationRewriter(
  identity: StreamIdentity | undefined,
  trailingWhitespace: string,
): (chunk: ChatCompletionChunk) => ChatCompletionChunk | undefined {
  let trimLeading = trailingWhitespace.length > 0;
  return (chunk) => {
    const choices: ChatCompletionChunk['choices'] = [];
    for (const choice of chunk.choices) {
      const source = choice as typeof choice & { text?: string };
      const delta = source.delta ? { ...source.delta } : undefined;
      let text = source.text;
      if (delta) delete delta.role;
      if (trimLeading) {
        if (delta && typeof delta.content === 'string' && delta.content.length > 0) {
          delta.content = delta.content.replace(/^\s+/, '');
          trimLeading = delta.content.length === 0;
        } else if (typeof text === 'string' && text.length > 0) {
          text = text.replace(/^\s+/, '');
          trimLeading = text.length === 0;
        }
      }
      const carries =
        choice.finish_reason ||
        (typeof text === 'string' && text.length > 0) ||
        (delta && Object.entries(delta).some(([, v]) => v !== undefined && v !== null && v !== ''));
      if (!carries) continue;
      const out = { ...choice, index: 0 } as typeof choice & { text?: string };
      if (delta) out.delta = delta;
      if (text !== undefined) out.text = text;
      choices.push(out);
    }
    if (choices.length === 0 && !chunk.usage) return undefined;
    return {
      ...chunk,
      ...(identity ? { id: identity.id, created: identity.created } : {}),
      choices,
    };
  };
}
