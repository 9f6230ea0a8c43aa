/**
 * Embeddings for providers that take fewer inputs per call than the client sent
 * (capabilities.embeddingInputsPerCall), or fewer tokens in all (capabilities.embeddingTokensPerCall, against a
 * generous estimate of each text's tokens): the gateway splits `input` into calls within those bounds, runs a
 * few at a time, and merges their answers into one list in input order, each item's `index` its place in
 * the client's `input`, usage the sum of the calls. Any call failing fails the whole attempt, so routing
 * treats it as one.
 */
import { CallAbort } from '../core/abort.js';
import type { EmbeddingResponse, Usage } from '../core/openai-types.js';
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

/** Calls of one request in flight at once: a 2048-input request to a one-input model is not 2048 sockets. */
export const EMBEDDING_CALLS_AT_ONCE = 8;

/**
 * A token count no smaller than a text's, whatever the provider's tokenizer: its UTF-8 bytes over three. An
 * English token is about four characters (bytes), a Chinese or Japanese character about one token and three
 * bytes; an estimate too high only costs a call more, one too low a call the provider refuses.
 */
export function generousTokenEstimate(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 3);
}

/** The requests an embeddings request is split into; undefined when one call takes it all. */
export function embeddingRequests(input: AttemptInput): AdapterRequest<'embeddings'>[] | undefined {
  if (input.request.endpoint !== 'embeddings') return undefined;
  const request = input.request as AdapterRequest<'embeddings'>;
  const capabilities = input.resolved.adapter.capabilities;
  const perCall = capabilities.embeddingInputsPerCall?.(request);
  const tokensPerCall = capabilities.embeddingTokensPerCall?.(request);
  const texts = request.body.input;
  // Only a list of texts is split: a token array is refused by the adapters that set a limit.
  if ((!perCall && !tokensPerCall) || !Array.isArray(texts) || texts.length <= 1) return undefined;
  if (!texts.every((text) => typeof text === 'string')) return undefined;
  const groups = splitTexts(texts as string[], perCall ?? Number.POSITIVE_INFINITY, tokensPerCall);
  if (groups.length <= 1) return undefined;
  return groups.map((group) => ({ ...request, body: { ...request.body, input: group }, auth: undefined }));
}

/**
 * The texts in order, cut into runs of at most `perCall` whose estimated tokens stay within `tokensPerCall`.
 * A text over the token bound alone goes in a call of its own: the provider truncates or refuses it.
 */
function splitTexts(texts: string[], perCall: number, tokensPerCall: number | undefined): string[][] {
  const groups: string[][] = [];
  let group: string[] = [];
  let tokens = 0;
  for (const text of texts) {
    const estimate = tokensPerCall ? generousTokenEstimate(text) : 0;
    const full =
      group.length >= perCall || (tokensPerCall !== undefined && tokens + estimate > tokensPerCall);
    if (group.length > 0 && full) {
      groups.push(group);
      group = [];
      tokens = 0;
    }
    group.push(text);
    tokens += estimate;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

export async function fanOutEmbeddings(
  input: AttemptInput,
  requests: AdapterRequest<'embeddings'>[],
): Promise<AttemptOutcome> {
  const abort = new CallAbort();
  input.clientSignal.addEventListener('abort', abort, { once: true });
  if (input.clientSignal.aborted) abort.abort();

  try {
    // One failed call dooms the merged answer: stop the others at once, and start no more.
    const made = await runCallsAtOnce(
      requests,
      EMBEDDING_CALLS_AT_ONCE,
      async (request) => {
        const outcome = await runAttempt({
          ...input,
          ...deadlinesOfACallStartingNow(input),
          request,
          clientSignal: abort,
        });
        if (!outcome.ok) abort.abort();
        return outcome;
      },
      (outcome) => !outcome.ok,
    );
    const usage = made.reduce<Usage | undefined>(
      (total, outcome) => addUsage(total, outcome.usage),
      undefined,
    );
    const failures = made.filter((outcome): outcome is AttemptFailure => !outcome.ok);
    if (failures.length > 0) {
      // The first real failure, not the calls cancelled because of it.
      const cause = failures.find((failure) => failure.reason !== 'client_gone') ?? failures[0];
      return { ...cause, usage, reason: input.clientSignal.aborted ? 'client_gone' : cause.reason };
    }
    const successes = made as AttemptSuccess[];
    const bodies = successes.map((success) => success.body as EmbeddingResponse);
    let offset = 0;
    const data: EmbeddingResponse['data'] = [];
    for (const [call, body] of bodies.entries()) {
      for (const item of body.data) data.push({ ...item, index: offset + item.index });
      offset += requests[call].body.input.length;
    }
    const first = successes[0];
    const ttfbMs = Math.min(...successes.map((s) => s.ttfbMs ?? Number.POSITIVE_INFINITY));
    const merged: EmbeddingResponse = {
      ...bodies[0],
      data,
      usage: {
        prompt_tokens: usage?.prompt_tokens ?? 0,
        total_tokens: usage?.total_tokens ?? 0,
      },
    };
    return {
      ...first,
      body: merged,
      rawText: undefined,
      usage,
      ttfbMs: Number.isFinite(ttfbMs) ? ttfbMs : null,
    };
  } finally {
    input.clientSignal.removeEventListener('abort', abort);
  }
}
