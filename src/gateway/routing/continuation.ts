/**
 * Continuing a streamed answer on another target after the first one broke mid-way. The client already
 * holds part of the answer; the next target is asked for the rest, and its chunks are rewritten into the
 * client's stream (same id, created and choice index; its own model), so the client sees one answer that
 * ends with [DONE].
 *
 * How the rest is asked for depends on the target: providers that accept an assistant prefill
 * (Anthropic-style, without extended thinking) get the partial answer as the last, assistant, message and
 * simply go on; OpenAI-wire providers, and Anthropic-style ones with thinking on, get the partial answer
 * as an assistant message followed by a user message asking to continue exactly where it stopped. Text completions append the partial text to the prompt.
 */
import type { ChatCompletionChunk } from '../../core/openai-types.js';
import type { ModelRequest } from '../../providers/types.js';
import type { StreamIdentity } from '../delivered-stream.js';

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

/** Whether the request turns extended thinking on. */
function thinks(body: { thinking?: { type?: string } | null }): boolean {
  const type = body.thinking?.type;
  return type !== undefined && type !== 'disabled';
}

/** The request for the next target (its operation and body), and how its answer joins the client's. */
export type Continuation = ModelRequest & ContinuationJoin;

export interface ContinuationJoin {
  /** Rewrites the next target's chunks into the client's stream; undefined drops a chunk. */
  rewrite: (chunk: ChatCompletionChunk) => ChatCompletionChunk | undefined;
  /** true once the next target restarted the answer and then said it differently: what it says can no
   * longer be joined to what the client has. */
  readonly diverged: boolean;
}

/** What the client already has of the answer to `request` (the request the first target was sent, without
 * the target's override_params). */
export interface PartialAnswer {
  /** The text the client has of choice 0. */
  text: string;
  identity: StreamIdentity | undefined;
  provider: string;
  /** The model the next target will be called with. */
  model: string | undefined;
}

/**
 * Whether a target given `request` can take over a partial answer. A Responses or Anthropic Messages
 * request is continued as the chat request its ingress step makes of it (steps/responses-step.ts,
 * steps/messages-step.ts), which always has messages.
 */
export function isContinuable(request: ModelRequest): boolean {
  if (request.endpoint === 'chat') return Array.isArray(request.body.messages);
  if (request.endpoint === 'completions') return promptText(request.body.prompt) !== undefined;
  return request.endpoint === 'responses' || request.endpoint === 'messages';
}

function promptText(prompt: unknown): string | undefined {
  if (Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === 'string') return prompt[0];
  return typeof prompt === 'string' ? prompt : undefined;
}

/** Builds the continuation, or undefined when the request cannot be continued this way. */
export function buildContinuation(request: ModelRequest, partial: PartialAnswer): Continuation | undefined {
  const { text } = partial;
  if (request.endpoint === 'chat') {
    const { body } = request;
    const messages = body.messages;
    if (!Array.isArray(messages)) return undefined;
    if (text === '') return continuationOf({ endpoint: 'chat', body }, partial, '');
    // Anthropic refuses a prefill when extended thinking is on: such a target is asked to continue.
    if (acceptsAssistantPrefill(partial.provider, partial.model) && !thinks(body)) {
      // A prefill must not end in whitespace (Anthropic refuses it); the client already has that
      // whitespace, so any the model repeats at its start is dropped.
      const prefill = text.trimEnd();
      if (prefill === '') return continuationOf({ endpoint: 'chat', body }, partial, '');
      return continuationOf(
        {
          endpoint: 'chat',
          body: { ...body, messages: [...messages, { role: 'assistant', content: prefill }] },
        },
        partial,
        text.slice(prefill.length),
      );
    }
    return continuationOf(
      {
        endpoint: 'chat',
        body: {
          ...body,
          messages: [
            ...messages,
            { role: 'assistant', content: text },
            { role: 'user', content: CONTINUE_INSTRUCTION },
          ],
        },
      },
      partial,
      '',
    );
  }
  if (request.endpoint === 'completions') {
    const { body } = request;
    const prompt = promptText(body.prompt);
    if (prompt === undefined) return undefined;
    const { echo: _echo, suffix: _suffix, ...rest } = body;
    return continuationOf({ endpoint: 'completions', body: { ...rest, prompt: prompt + text } }, partial, '');
  }
  return undefined;
}

function continuationOf(
  request: ModelRequest,
  partial: PartialAnswer,
  trailingWhitespace: string,
): Continuation {
  const rewriter = new ContinuationRewriter(partial.identity, trailingWhitespace, partial.text);
  return {
    ...request,
    rewrite: (chunk) => rewriter.rewrite(chunk),
    get diverged() {
      return rewriter.diverged;
    },
  };
}

/**
 * How much of the delivered text a continuation must repeat from its very beginning before it is taken
 * for a restart of the answer rather than a continuation that happens to start the same way.
 */
const RESTART_EVIDENCE_CHARS = 24;

/**
 * Rewrites chunks of the continuing stream: the first stream's id and created, choice index 0, no second
 * role delta. `trailingWhitespace` is whitespace the client has but the prefill did not carry; leading
 * whitespace of the continuation is dropped in that case so it is not doubled.
 *
 * A target asked to continue may instead start the answer over. Its text is held back while it repeats
 * the delivered text from the beginning; once the repetition is certain (the whole delivered text, or
 * its first RESTART_EVIDENCE_CHARS characters), the repeated part is skipped and only what comes after
 * reaches the client. A restart that then says something else than the client already has `diverged`:
 * the answer cannot be joined and ends with the in-band error. Text that stops repeating before the
 * evidence is enough was a continuation after all, and is sent as it came.
 */
class ContinuationRewriter {
  diverged = false;
  private trimLeading: boolean;
  /** Continuation text held back while it repeats the delivered text; null once decided. */
  private held: string | null;
  /** The continuation repeats the delivered text for sure (restarted), and must go on repeating it. */
  private restarting = false;

  constructor(
    private readonly identity: StreamIdentity | undefined,
    trailingWhitespace: string,
    private readonly delivered: string,
  ) {
    this.trimLeading = trailingWhitespace.length > 0;
    this.held = delivered.length > 0 ? '' : null;
  }

  rewrite(chunk: ChatCompletionChunk): ChatCompletionChunk | undefined {
    if (this.diverged) return undefined;
    const choices: ChatCompletionChunk['choices'] = [];
    for (const choice of chunk.choices) {
      const source = choice as typeof choice & { text?: string };
      const delta = source.delta ? { ...source.delta } : undefined;
      let text = source.text;
      if (delta) delete delta.role;
      const isDelta = typeof delta?.content === 'string';
      let content = isDelta ? (delta?.content as string) : text;
      if (this.trimLeading && typeof content === 'string' && content.length > 0) {
        content = content.replace(/^\s+/, '');
        this.trimLeading = content.length === 0;
      }
      if (typeof content === 'string') content = this.dedupe(content, Boolean(choice.finish_reason));
      else if (choice.finish_reason) content = this.dedupe('', true);
      if (this.diverged) return undefined;
      if (isDelta && delta) delta.content = content as string;
      else if (content !== undefined && text !== undefined) text = content;
      else if (content !== undefined && content.length > 0 && delta) delta.content = content;
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
      ...(this.identity ? { id: this.identity.id, created: this.identity.created } : {}),
      choices,
    };
  }

  /** The part of `content` the client is to get; holds back what may be a repetition. */
  private dedupe(content: string, finishing: boolean): string {
    if (this.held === null) return content;
    const combined = this.held + content;
    const { delivered } = this;
    if (delivered.startsWith(combined)) {
      if (combined.length === delivered.length) {
        // The whole delivered text, repeated: what follows is new.
        this.held = null;
        this.restarting = false;
        return '';
      }
      if (combined.length >= RESTART_EVIDENCE_CHARS) this.restarting = true;
      if (finishing) {
        // The target ended while still repeating: a restart that said less, or a short continuation.
        if (this.restarting) this.diverged = true;
        this.held = null;
        return this.restarting ? '' : combined;
      }
      this.held = combined;
      return '';
    }
    this.held = null;
    if (combined.startsWith(delivered)) {
      this.restarting = false;
      return combined.slice(delivered.length);
    }
    if (this.restarting) {
      this.diverged = true;
      return '';
    }
    return combined;
  }
}
