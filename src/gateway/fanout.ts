/**
 * `n` > 1 for providers that return one choice per call (capabilities.n = 'fanout'): the gateway sends n
 * calls, a few at a time (each holds its own serialized copy of the request: n = 128 at once held 128;
 * fanoutCallsAtOnce), and merges them into one answer whose choices are numbered 0…n-1. Streams are merged into the
 * client's one stream as their chunks arrive, each renumbered to its choice. Usage is the sum of the calls
 * (what the provider bills). Any call failing fails the whole attempt, so routing treats it as one.
 */
import { CallAbort } from '../core/abort.js';
import { jsonTextBytes } from '../core/json-text-bytes.js';
import type { ChatCompletion, ChatCompletionChunk, Usage } from '../core/openai-types.js';
import type { AdapterRequest } from '../providers/types.js';
import {
  runAttempt,
  type AttemptFailure,
  type AttemptInput,
  type AttemptOutcome,
  type AttemptSuccess,
} from './attempt.js';
import { addUsage } from './add-usage.js';
import { deadlinesOfACallStartingNow, runCallsAtOnce } from './calls-at-once.js';
import { embeddingRequests, fanOutEmbeddings } from './embeddings-fanout.js';
import { ForwardingSink, type AnswerChunk, type CallSink, type OpenAIChunk } from './sink.js';

/**
 * One of the n calls' view of the merged stream: its chunks get the merged stream's id and its choice's
 * index; its own usage is held back (the merged answer reports the sum once, at the end).
 */
class FanoutMemberSink extends ForwardingSink {
  constructor(
    next: CallSink,
    private readonly index: number,
    private readonly merged: { id: string | undefined },
  ) {
    super(next);
  }

  override chunk(answerChunk: AnswerChunk): Promise<void> | undefined {
    // Only chat and text completions are fanned out (fanoutRequests).
    const chunk = answerChunk as OpenAIChunk;
    if (chunk.choices.length === 0) return undefined;
    this.merged.id ??= chunk.id;
    const { usage: _usage, ...rest } = chunk as ChatCompletionChunk;
    const renumbered = {
      ...rest,
      id: this.merged.id,
      choices: chunk.choices.map((choice) => ({ ...choice, index: this.index })),
    } as AnswerChunk;
    return this.next.chunk(renumbered, undefined);
  }
}

/** Calls of one fanned-out request in flight at once: each holds its own serialized copy of the request. */
export const FANOUT_CALLS_AT_ONCE = 8;

/** The most of the request body the calls in flight hold copies of at once: a large prompt is fanned out
 * fewer calls at a time, down to one (a 25 MB prompt with n = 8 is not 200 MB held at once). */
export const FANOUT_BODY_BYTES_AT_ONCE = 16 * 1024 * 1024;

/** How many of a fan-out's calls run at once, by the size of the body each call copies. The client's own
 * body is as large as the text it sent (kept by the parser, so a body sent in chunks with no
 * `content-length` is sized too), or its `content-length` when larger: read, not measured. Any other body
 * (a prompt's rendered one, a batch line's, one override_params or a hook made) is measured, as
 * JSON.stringify would write it. */
export function fanoutCallsAtOnce(request: AdapterRequest, clientBodyText?: string): number {
  const bytes =
    clientBodyText === undefined
      ? jsonTextBytes(request.body)
      : Math.max(Buffer.byteLength(clientBodyText, 'utf8'), declaredBytes(request));
  if (bytes <= 0) return FANOUT_CALLS_AT_ONCE;
  return Math.max(1, Math.min(FANOUT_CALLS_AT_ONCE, Math.floor(FANOUT_BODY_BYTES_AT_ONCE / bytes)));
}

function declaredBytes(request: AdapterRequest): number {
  const declared = Number(request.clientHeaders['content-length']);
  return Number.isFinite(declared) ? declared : 0;
}

/** The requests `n` is fanned out into, one per choice; undefined when the provider honours n itself, or n
 * is 1. */
export function fanoutRequests(input: AttemptInput): AdapterRequest[] | undefined {
  const { request } = input;
  if (request.endpoint !== 'chat' && request.endpoint !== 'completions') return undefined;
  const handling = input.resolved.adapter.capabilities.n;
  if ((typeof handling === 'function' ? handling(request) : handling) !== 'fanout') return undefined;
  const n = request.body.n;
  if (typeof n !== 'number' || n <= 1) return undefined;
  return Array.from({ length: n }, () => oneChoice(request));
}

/** The request of one of the fanned-out calls: the same, asking for one choice. */
function oneChoice<K extends 'chat' | 'completions'>(request: AdapterRequest<K>): AdapterRequest<K> {
  const { n: _n, ...single } = request.body;
  return { ...request, body: single, auth: undefined };
}

/** Runs one attempt, fanning `n` out into parallel calls when the provider cannot honour it natively, and
 * embedding inputs out into calls of as many as the provider takes (embeddings-fanout.ts). */
export function runModelAttempt(input: AttemptInput): Promise<AttemptOutcome> {
  const requests = fanoutRequests(input);
  if (requests) return fanOut(input, requests);
  const embeddings = embeddingRequests(input);
  if (embeddings) return fanOutEmbeddings(input, embeddings);
  // One call (the common case): its own promise, with no async frame of this function's around it.
  return runAttempt(input);
}

async function fanOut(input: AttemptInput, requests: AdapterRequest[]): Promise<AttemptOutcome> {
  const abort = new CallAbort();
  input.clientSignal.addEventListener('abort', abort, { once: true });
  if (input.clientSignal.aborted) abort.abort();
  const stream: { id: string | undefined } = { id: undefined };
  const sink = input.sink;

  try {
    // One failed call dooms the merged answer: stop the others at once, and start no more.
    const outcomes = await runCallsAtOnce(
      requests,
      fanoutCallsAtOnce(input.request, input.clientBodyText),
      async (request, index) => {
        const outcome = await runAttempt({
          ...input,
          ...deadlinesOfACallStartingNow(input),
          request,
          clientSignal: abort,
          sink: sink ? new FanoutMemberSink(sink, index, stream) : undefined,
        });
        if (!outcome.ok) abort.abort();
        return outcome;
      },
      (outcome) => !outcome.ok,
    );
    const failures = outcomes.filter((outcome): outcome is AttemptFailure => !outcome.ok);
    const successes = outcomes.filter((outcome): outcome is AttemptSuccess => outcome.ok);
    const usage = outcomes.reduce<Usage | undefined>(
      (total, outcome) => addUsage(total, outcome.usage),
      undefined,
    );
    if (failures.length > 0) {
      // The first real failure, not the calls cancelled because of it.
      const cause = failures.find((failure) => failure.reason !== 'client_gone') ?? failures[0];
      return {
        ...cause,
        afterFirstByte: (sink?.written ?? 0) > 0,
        usage,
        reason: input.clientSignal.aborted ? 'client_gone' : cause.reason,
      };
    }
    const first = successes[0];
    const merged: AttemptSuccess = {
      ...first,
      usage,
      ttfbMs: Math.min(...successes.map((s) => s.ttfbMs ?? Number.POSITIVE_INFINITY)),
      malformedChunks: successes.reduce((total, s) => total + s.malformedChunks, 0),
      rawText: undefined,
    };
    if (sink) {
      if (usage) {
        const usageChunk: ChatCompletionChunk = {
          id: stream.id ?? `chatcmpl-${Date.now()}`,
          object: 'chat.completion.chunk',
          created: Math.floor(Date.now() / 1000),
          model: first.model ?? String(input.request.body.model),
          choices: [],
          usage,
        };
        const pending = sink.chunk(usageChunk, undefined);
        if (pending) await pending;
      }
      return merged;
    }
    const bodies = successes.map((s) => s.body as ChatCompletion);
    merged.body = {
      ...bodies[0],
      choices: bodies.map((body, index) => ({ ...body.choices[0], index })),
      usage,
    };
    return merged;
  } finally {
    input.clientSignal.removeEventListener('abort', abort);
  }
}
