import type { ChatCompletionChunk, FinishReason, ToolCallDelta, Usage } from '../../core/openai-types.js';
import type { StreamOutput, StreamTranslator, UpstreamEvent } from '../types.js';
import type {
  GeminiCandidate,
  GeminiFunctionCall,
  GeminiGenerateContentResponse,
} from './google-api-types.js';
import { convertGoogleUsage } from './convert-google-usage.js';
import { geminiStreamError } from './google-error.js';
import { completionId, createdAt, generateToolCallId } from './google-ids.js';
import { invalidOutputError, isInvalidCallFinish } from './google-invalid-output.js';
import { PartialArgsBuilder } from './google-partial-args.js';
import { mapGoogleFinishReason } from './map-google-finish-reason.js';

export interface GoogleStreamOptions {
  provider: string;
  model: string;
  strictCompat: boolean;
  /** `stream_options.include_usage`: end with a `choices: []` chunk carrying usage. */
  includeUsage: boolean;
  /** Choices expected (`n`); the answer is complete once that many have finished. */
  choiceCount: number;
  /** The request used the deprecated `functions`: the first call streams as `function_call`. */
  legacyFunctions?: boolean;
}

type ChoiceDelta = ChatCompletionChunk['choices'][number]['delta'];

interface OpenCall {
  index: number;
  args: PartialArgsBuilder;
}

interface ChoiceState {
  roleSent: boolean;
  toolCalls: number;
  open: OpenCall | undefined;
  finish: FinishReason | null;
  signatureSent: boolean;
  sawThought: boolean;
  /** Text or a tool call went out. */
  answered: boolean;
}

/**
 * `streamGenerateContent?alt=sse` events → OpenAI chunks. Gemini sends each event as a partial
 * GenerateContentResponse: text pieces, thought pieces, and function calls either whole (one tool-call
 * delta each, with a generated id and the full arguments) or, on newer models, streamed as `partialArgs`
 * (a first delta with id and name when the call opens, the whole arguments when it closes). Usage
 * metadata repeats on every event; the last one is final. There is no end marker: a candidate's
 * `finishReason` ends it.
 */
export function createGeminiStreamTranslator(options: GoogleStreamOptions): StreamTranslator {
  const choices = new Map<number, ChoiceState>();
  let id: string | undefined;
  let created = 0;
  let model = options.model;
  let usage: Usage | undefined;
  let usageSent = false;
  let failed = false;

  const chunk = (choiceList: ChatCompletionChunk['choices']): ChatCompletionChunk => ({
    id: id ?? '',
    object: 'chat.completion.chunk',
    created,
    model,
    choices: choiceList,
  });

  const stateOf = (index: number): ChoiceState => {
    let state = choices.get(index);
    if (!state) {
      state = {
        roleSent: false,
        toolCalls: 0,
        open: undefined,
        finish: null,
        signatureSent: false,
        sawThought: false,
        answered: false,
      };
      choices.set(index, state);
    }
    return state;
  };

  const emit = (
    out: StreamOutput[],
    index: number,
    delta: ChoiceDelta,
    finish: FinishReason | null = null,
  ): void => {
    const state = stateOf(index);
    if (delta.content || delta.tool_calls) state.answered = true;
    if (options.legacyFunctions) {
      const legacy = toLegacyDelta(delta, finish);
      if (!legacy) return;
      [delta, finish] = legacy;
    }
    const full: ChoiceDelta = state.roleSent ? delta : { role: 'assistant', ...delta };
    state.roleSent = true;
    out.push({ type: 'chunk', chunk: chunk([{ index, delta: full, finish_reason: finish }]) });
  };

  const closeCall = (out: StreamOutput[], index: number): void => {
    const state = stateOf(index);
    if (!state.open) return;
    emit(out, index, {
      tool_calls: [{ index: state.open.index, function: { arguments: state.open.args.toJSON() } }],
    });
    state.open = undefined;
  };

  const onFunctionCall = (out: StreamOutput[], index: number, call: GeminiFunctionCall): void => {
    const state = stateOf(index);
    const streamed = call.willContinue === true || call.partialArgs !== undefined;
    if (call.name) {
      closeCall(out, index);
      const delta: ToolCallDelta = {
        index: state.toolCalls++,
        id: call.id ?? generateToolCallId(),
        type: 'function',
        function: { name: call.name, arguments: streamed ? '' : JSON.stringify(call.args ?? {}) },
      };
      emit(out, index, { tool_calls: [delta] });
      if (streamed) state.open = { index: delta.index, args: new PartialArgsBuilder() };
    }
    if (!state.open) return;
    for (const arg of call.partialArgs ?? []) state.open.args.apply(arg);
    if (call.willContinue !== true) closeCall(out, index);
  };

  /** The one expected choice ended with an invalid call and no answer: the stream fails (as a plain call does). */
  const invalidEnd = (candidate: GeminiCandidate, index: number): boolean =>
    options.choiceCount === 1 &&
    isInvalidCallFinish(candidate.finishReason) &&
    !stateOf(index).answered &&
    stateOf(index).open === undefined;

  const onCandidate = (out: StreamOutput[], candidate: GeminiCandidate, position: number): void => {
    const index = candidate.index ?? position;
    const state = stateOf(index);
    if (state.finish !== null) return;
    for (const part of candidate.content?.parts ?? []) {
      const text = typeof part.text === 'string' && part.text.length > 0 ? part.text : undefined;
      if (text !== undefined && part.thought) {
        state.sawThought = true;
        if (!options.strictCompat)
          emit(out, index, { content_blocks: [{ index: 0, delta: { type: 'thinking', thinking: text } }] });
      }
      // Surfaced (non-strict) where Gemini needs it back: with thoughts or function calls. It goes out
      // before the call or answer text of its part, so it joins the thinking it signs (a Messages client
      // would otherwise get a second, empty thinking block after the tool_use).
      if (
        part.thoughtSignature &&
        !options.strictCompat &&
        !state.signatureSent &&
        (state.sawThought || state.toolCalls > 0 || part.functionCall)
      ) {
        state.signatureSent = true;
        emit(out, index, {
          content_blocks: [{ index: 0, delta: { type: 'thinking', signature: part.thoughtSignature } }],
        });
      }
      if (part.functionCall) onFunctionCall(out, index, part.functionCall);
      else if (text !== undefined && !part.thought) emit(out, index, { content: text });
    }
    if (candidate.finishReason && invalidEnd(candidate, index)) {
      failed = true;
      out.push({ type: 'error', error: invalidOutputError(options.provider, candidate) });
      return;
    }
    if (candidate.finishReason) {
      closeCall(out, index);
      state.finish = mapGoogleFinishReason(candidate.finishReason, state.toolCalls > 0) ?? 'stop';
      emit(out, index, {}, state.finish);
    }
  };

  const allFinished = (): boolean => {
    let done = 0;
    for (const state of choices.values()) if (state.finish !== null) done++;
    return done > 0 && done >= options.choiceCount;
  };

  const finishOutputs = (out: StreamOutput[]): void => {
    if (usageSent) return;
    usageSent = true;
    if (options.includeUsage && usage) out.push({ type: 'chunk', chunk: { ...chunk([]), usage } });
    out.push({ type: 'done' });
  };

  return {
    push(event: UpstreamEvent): StreamOutput[] {
      if (failed || usageSent || event.kind !== 'sse') return [];
      const data = event.data.trim();
      if (data === '' || data === '[DONE]') return [];
      let body: GeminiGenerateContentResponse;
      try {
        body = JSON.parse(data) as GeminiGenerateContentResponse;
      } catch {
        return [{ type: 'malformed', detail: `not JSON: ${data.slice(0, 200)}` }];
      }
      if (Array.isArray(body)) body = (body[0] ?? {}) as GeminiGenerateContentResponse;
      const failure = geminiStreamError(options.provider, body);
      if (failure) {
        failed = true;
        return [{ type: 'error', error: failure }];
      }
      if (id === undefined) {
        id = completionId(body);
        created = createdAt(body);
      }
      if (body.modelVersion) model = body.modelVersion;
      usage = convertGoogleUsage(body.usageMetadata) ?? usage;

      const out: StreamOutput[] = [];
      const candidates = body.candidates ?? [];
      if (candidates.length === 0 && body.promptFeedback?.blockReason) {
        for (let index = 0; index < options.choiceCount; index++) {
          const state = stateOf(index);
          if (state.finish === null) {
            state.finish = 'content_filter';
            emit(out, index, { content: '' }, 'content_filter');
          }
        }
      }
      candidates.forEach((candidate, position) => onCandidate(out, candidate, position));
      if (failed) return out;
      if (allFinished()) finishOutputs(out);
      return out;
    },
    end(): StreamOutput[] {
      const out: StreamOutput[] = [];
      // A cut stream is not passed off as complete: no usage chunk and no `done` unless Gemini finished.
      if (!failed && allFinished()) finishOutputs(out);
      return out;
    },
    usage: () => usage,
    finished: () => allFinished(),
  };
}

/**
 * A delta in the deprecated `functions` form: the first call's pieces become `function_call` (which holds one
 * call; later calls are left out) and a `tool_calls` finish becomes `function_call`. Undefined: nothing left.
 */
function toLegacyDelta(
  delta: ChoiceDelta,
  finish: FinishReason | null,
): [ChoiceDelta, FinishReason | null] | undefined {
  const legacyFinish = finish === 'tool_calls' ? 'function_call' : finish;
  if (!delta.tool_calls) return [delta, legacyFinish];
  const { tool_calls: calls, ...rest } = delta;
  const first = calls.find((call) => call.index === 0);
  if (!first) return Object.keys(rest).length > 0 || finish !== null ? [rest, legacyFinish] : undefined;
  const functionCall: { name?: string; arguments?: string } = {};
  if (first.function?.name !== undefined) functionCall.name = first.function.name;
  if (first.function?.arguments !== undefined) functionCall.arguments = first.function.arguments;
  return [{ ...rest, function_call: functionCall }, legacyFinish];
}
