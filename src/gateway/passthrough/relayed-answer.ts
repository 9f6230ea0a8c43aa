/**
 * Reads a pass-through's answer on its way to the client, without holding it back, for the `model` and
 * `usage` the log records, cost and rate-limit policies settle token reservations with. The usage is read
 * by the target's adapter (`ProviderAdapter.passthroughUsage`), which knows its provider's answer shapes.
 *
 * - A JSON answer: a copy is kept (up to 1 MiB) and parsed once the body has been relayed.
 * - A server-sent-events stream (`text/event-stream`): each event's JSON is read as it goes by, nothing
 *   kept but the model and the counts so far. Where a stream's usage comes — OpenAI's last chunk, Gemini's
 *   every chunk (running totals), Anthropic's `message_start` and `message_delta`, the Responses API's
 *   `response.completed` — each count is the highest any event gave, and the total at least their sum.
 *   A stream cut short gives none: its usage is unknown, as for a JSON answer cut short.
 * Bedrock's streams are AWS event-stream frames, not server-sent events: their usage is not read.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Usage } from '../../core/openai-types.js';
import type { UpstreamRelay } from '../attempt.js';

/** How much of a JSON answer is kept to read its model and usage. */
const MAX_JSON_KEPT = 1 << 20;

type AnswerRead = { model: string | undefined; usage: Usage | undefined };

export interface AnswerReader {
  result(): AnswerRead | undefined;
}

const reads = new WeakMap<UpstreamRelay, AnswerReader>();

/**
 * The reader of a relayed answer's body; undefined when the body is neither JSON nor server-sent events.
 * The first call taps the relay's body; later calls for the same relay share that reader, so the
 * rate-limit step and the pass-through's log read it once.
 */
export function readRelayedAnswer(relay: UpstreamRelay): AnswerReader | undefined {
  const known = reads.get(relay);
  if (known) return known;
  const body = relay.body;
  if (typeof body === 'string' || !relay.usageOf) return undefined;
  const type = relay.headers['content-type'] ?? '';
  const read = type.includes('json')
    ? readJson(relay, body, relay.usageOf)
    : type.includes('text/event-stream')
      ? readEvents(relay, body, relay.usageOf)
      : undefined;
  if (read) reads.set(relay, read);
  return read;
}

type UsageOf = NonNullable<UpstreamRelay['usageOf']>;

function readJson(relay: UpstreamRelay, body: AsyncIterable<Uint8Array>, usageOf: UsageOf): AnswerReader {
  const kept: Uint8Array[] = [];
  let bytes = 0;
  let complete = false;
  relay.body = (async function* tap() {
    for await (const chunk of body) {
      if (bytes <= MAX_JSON_KEPT) {
        bytes += chunk.byteLength;
        kept.push(chunk);
      }
      yield chunk;
    }
    complete = bytes <= MAX_JSON_KEPT;
  })();
  return {
    result() {
      if (!complete) return undefined;
      const answer = jsonObject(Buffer.concat(kept).toString('utf8'));
      return answer && { model: modelOf(answer), usage: usageOf(answer) };
    },
  };
}

function readEvents(relay: UpstreamRelay, body: AsyncIterable<Uint8Array>, usageOf: UsageOf): AnswerReader {
  let model: string | undefined;
  let usage: Usage | undefined;
  let complete = false;
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      const event = jsonObject(message.data);
      if (!event) return; // `[DONE]`, a comment-like or malformed event: relayed, not read
      // Anthropic's `message_start` and the Responses API's events carry the answer one level down.
      for (const answer of [outputOnly(event), nested(event, 'message'), nested(event, 'response')]) {
        if (!answer) continue;
        model ??= modelOf(answer);
        const counts = usageOf(answer);
        if (counts) usage = usage ? highest(usage, counts) : counts;
      }
    },
  });
  relay.body = (async function* tap() {
    const decoder = new TextDecoder();
    for await (const chunk of body) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      yield chunk;
    }
    parser.feed(decoder.decode());
    complete = true;
  })();
  return {
    result: () => (complete ? { model, usage } : undefined),
  };
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

function jsonObject(text: string): Counts | undefined {
  try {
    const parsed = JSON.parse(text) as unknown;
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
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
