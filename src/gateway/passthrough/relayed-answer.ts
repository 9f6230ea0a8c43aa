/**
 * Reads a pass-through's answer on its way to the client, without holding it back, for the `model` and
 * `usage` the log records, cost and rate-limit policies settle token reservations with. The usage is read
 * by the target's adapter (`ProviderAdapter.passthroughUsage`), which knows its provider's answer shapes.
 *
 * - A JSON answer: a copy is kept (up to 1 MiB) and parsed once the body has been relayed; of a larger
 *   one, its small top-level members (passthrough/json-skeleton.ts). A JSON array is read as a stream of
 *   answers (Gemini's and Vertex AI's streamGenerateContent without `alt=sse`).
 * - A server-sent-events stream (`text/event-stream`): each event's JSON is read as it goes by, nothing
 *   kept but the model and the counts so far. Where a stream's usage comes — OpenAI's last chunk, Gemini's
 *   every chunk (running totals), Anthropic's `message_start` and `message_delta`, the Responses API's
 *   `response.completed`, Cohere's `message-end` — each count is the highest any event gave, and the
 *   total at least their sum. A stream cut short gives none: its usage is unknown, as for a JSON answer
 *   cut short.
 * - A stream the provider ends with its own error event (Anthropic's `event: error`, on Anthropic, Vertex AI
 *   or in a Bedrock chunk; an OpenAI-wire chunk with an `error`; the Responses API's `error` and
 *   `response.failed`; Google's error object in a Gemini stream; Cohere's `message-end` with finish_reason
 *   ERROR or TIMEOUT; Bedrock's exceptions), read by the adapter's `passthroughStreamFailure`, gives that
 *   failure beside the usage its events reported before it, also when the stream then broke off (or went
 *   silent) instead of ending.
 * - Bedrock's streams (`application/vnd.amazon.eventstream`): AWS event-stream frames, decoded by the
 *   adapter's own decoder, read the same way. ConverseStream's `metadata` event carries the usage;
 *   InvokeModelWithResponseStream's `chunk` events carry the model's own events (Anthropic's for Claude)
 *   base64 in `bytes`, and the last one Bedrock's `amazon-bedrock-invocationMetrics` (whatever the model).
 *   An exception is relayed, and read as the stream's failure (below).
 * - An event larger than GATEWAY_UPSTREAM_EVENT_MAX_BYTES (`UpstreamRelay.maxEventBytes`) ends the reading,
 *   never the relay: the decoder would hold it whole, and the usage is then unknown.
 * - Usage the answer's headers give (Bedrock's InvokeModel, `x-amzn-bedrock-input-token-count`…, read by
 *   the adapter's `passthroughHeaderUsage`) counts for a body that carries none, whatever its type.
 */
import type { ProviderError } from '../../core/errors.js';
import type { Usage } from '../../core/openai-types.js';
import { createSseDecoder } from '../../providers/shared/sse-decoder.js';
import type { FrameDecoder, UpstreamEvent } from '../../providers/types.js';
import type { UpstreamRelay } from '../attempt.js';
import { JsonSkeleton } from './json-skeleton.js';

/** How much of a JSON answer is kept whole to read its model and usage; past it, each top-level member
 * of up to MAX_MEMBER_KEPT characters (an embeddings list's `model` and `usage`, not its `data`). */
const MAX_JSON_KEPT = 1 << 20;
const MAX_MEMBER_KEPT = 64 << 10;

type AnswerRead = {
  model: string | undefined;
  usage: Usage | undefined;
  /** The failure a stream's event reported (the provider's error inside its 200), when one did. */
  failure?: ProviderError;
};

export interface AnswerReader {
  result(): AnswerRead | undefined;
}

const reads = new WeakMap<UpstreamRelay, AnswerReader>();

/**
 * The reader of a relayed answer's body; undefined when the body is neither JSON nor a stream of events
 * the target's adapter can decode.
 * The first call taps the relay's body; later calls for the same relay share that reader, so the
 * rate-limit step and the pass-through's log read it once.
 */
export function readRelayedAnswer(relay: UpstreamRelay): AnswerReader | undefined {
  const known = reads.get(relay);
  if (known) return known;
  const body = relay.body;
  if (typeof body === 'string' || !relay.usageOf) return undefined;
  const type = relay.headers['content-type'] ?? '';
  const frames = type.includes('text/event-stream')
    ? createSseDecoder
    : type.includes('application/vnd.amazon.eventstream')
      ? relay.frameDecoder
      : undefined;
  const read = frames
    ? readEvents(relay, body, relay.usageOf, frames(relay.maxEventBytes))
    : type.includes('json')
      ? readJson(relay, body, relay.usageOf)
      : relay.headerUsage
        ? readToEnd(relay, body)
        : undefined;
  if (read) reads.set(relay, read);
  return read;
}

type UsageOf = NonNullable<UpstreamRelay['usageOf']>;

function readJson(relay: UpstreamRelay, body: AsyncIterable<Uint8Array>, usageOf: UsageOf): AnswerReader {
  const kept: Uint8Array[] = [];
  let bytes = 0;
  let complete = false;
  // Past MAX_JSON_KEPT, only the answer's small top-level members are kept, as its text goes by.
  let skeleton: JsonSkeleton | undefined;
  const decoder = new TextDecoder();
  relay.body = (async function* tap() {
    for await (const chunk of body) {
      if (skeleton) skeleton.push(decoder.decode(chunk, { stream: true }));
      else {
        bytes += chunk.byteLength;
        kept.push(chunk);
        if (bytes > MAX_JSON_KEPT) {
          skeleton = new JsonSkeleton(MAX_MEMBER_KEPT);
          for (const part of kept.splice(0)) skeleton.push(decoder.decode(part, { stream: true }));
        }
      }
      yield chunk;
    }
    skeleton?.push(decoder.decode());
    complete = true;
  })();
  return {
    result() {
      if (!complete) return undefined;
      const answer = skeleton ? skeleton.value() : jsonValue(Buffer.concat(kept).toString('utf8'));
      // A JSON array is a stream of answers too (Gemini's streamGenerateContent without `alt=sse`).
      if (Array.isArray(answer)) {
        const events = eventsRead(usageOf);
        for (const event of answer) if (isObject(event)) events.read(event);
        return { model: events.model, usage: events.usage ?? relay.headerUsage };
      }
      return isObject(answer)
        ? { model: modelOf(answer), usage: usageOf(answer) ?? relay.headerUsage }
        : undefined;
    },
  };
}

/** An answer of another type whose headers gave its usage: that usage, once the body has been relayed. */
function readToEnd(relay: UpstreamRelay, body: AsyncIterable<Uint8Array>): AnswerReader {
  let complete = false;
  relay.body = (async function* tap() {
    yield* body;
    complete = true;
  })();
  return { result: () => (complete ? { model: undefined, usage: relay.headerUsage } : undefined) };
}

function readEvents(
  relay: UpstreamRelay,
  body: AsyncIterable<Uint8Array>,
  usageOf: UsageOf,
  frames: FrameDecoder,
): AnswerReader {
  const events = eventsRead(usageOf);
  let complete = false;
  let failure: ProviderError | undefined;
  const read = (upstreamEvents: UpstreamEvent[]) => {
    for (const upstreamEvent of upstreamEvents) {
      const event = eventJson(upstreamEvent);
      failure ??= relay.failureOf?.(upstreamEvent, event);
      if (event) events.read(event); // else `[DONE]`, an exception, a malformed event: relayed, not read
    }
  };
  // Bytes that do not decode (a broken frame checksum) end the reading, never the relay: the usage is
  // then unknown, as for a stream cut short.
  let undecodable = false;
  const decode = (next: () => UpstreamEvent[]) => {
    if (undecodable) return;
    try {
      read(next());
    } catch {
      undecodable = true;
    }
  };
  relay.body = (async function* tap() {
    for await (const chunk of body) {
      decode(() => frames.push(chunk));
      yield chunk;
    }
    decode(() => frames.end());
    complete = !undecodable;
  })();
  // A stream that broke off after the provider's error event still gives that failure and what its
  // events reported before it: the error was the provider's last word, the break only came after.
  return {
    result: () =>
      complete || failure
        ? { model: events.model, usage: events.usage, ...(failure && { failure }) }
        : undefined,
  };
}

/** The model and usage of a stream's events, read one by one: each count the highest any event gave. */
function eventsRead(usageOf: UsageOf) {
  const state = {
    model: undefined as string | undefined,
    usage: undefined as Usage | undefined,
    read(event: Counts) {
      // Anthropic's `message_start` and the Responses API's events carry the answer one level down.
      for (const answer of [outputOnly(event), nested(event, 'message'), nested(event, 'response')]) {
        if (!answer) continue;
        state.model ??= modelOf(answer);
        const counts = usageOf(answer);
        if (counts) state.usage = state.usage ? highest(state.usage, counts) : counts;
      }
    },
  };
  return state;
}

/**
 * An event's JSON object: a server-sent event's data; an AWS event-stream event's payload, or the model's
 * own event it carries base64 in `bytes` (InvokeModelWithResponseStream's `chunk`).
 */
function eventJson(event: UpstreamEvent): Counts | undefined {
  if (event.kind === 'sse') return jsonObject(event.data);
  if (event.headers[':message-type'] !== 'event' || !isObject(event.payload)) return undefined;
  const { bytes } = event.payload;
  return typeof bytes === 'string'
    ? jsonObject(Buffer.from(bytes, 'base64').toString('utf8'))
    : event.payload;
}

/** Each count the highest of the two (nested details too); the total at least prompt plus completion. */
function highest(a: Usage, b: Usage): Usage {
  const merged = maxCounts(a as unknown as Counts, b as unknown as Counts) as unknown as Usage;
  merged.total_tokens = Math.max(merged.total_tokens, merged.prompt_tokens + merged.completion_tokens);
  return merged;
}

type Counts = Record<string, unknown>;

function maxCounts(a: Counts, b: Counts): Counts {
  const out: Counts = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const mine = out[key];
    if (typeof value === 'number') out[key] = typeof mine === 'number' ? Math.max(mine, value) : value;
    else if (isObject(value)) out[key] = isObject(mine) ? maxCounts(mine, value) : value;
    else if (mine === undefined) out[key] = value;
  }
  return out;
}

const isObject = (value: unknown): value is Counts =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function jsonValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function jsonObject(text: string): Counts | undefined {
  const parsed = jsonValue(text);
  return isObject(parsed) ? parsed : undefined;
}

function nested(event: Counts, key: string): Counts | undefined {
  const value = event[key];
  return isObject(value) ? value : undefined;
}

/**
 * An event whose usage counts only `output_tokens` (Anthropic's `message_delta` before it repeated the
 * input's counts), read as one with no input: the input was counted by `message_start`.
 */
function outputOnly(event: Counts): Counts {
  const usage = nested(event, 'usage');
  if (!usage || typeof usage.output_tokens !== 'number' || usage.input_tokens !== undefined) return event;
  return { ...event, usage: { ...usage, input_tokens: 0 } };
}

/** The model an answer names: `model`, or Gemini's `modelVersion`. */
function modelOf(answer: Counts): string | undefined {
  return typeof answer.model === 'string'
    ? answer.model
    : typeof answer.modelVersion === 'string'
      ? answer.modelVersion
      : undefined;
}
