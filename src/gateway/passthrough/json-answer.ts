/**
 * Reads a pass-through's JSON answer on its way to the client, without holding it back: a copy is kept
 * (up to 1 MiB) and parsed once the body has been relayed, for the `model` and `usage` the log records,
 * cost and rate-limit policies settle token reservations with. The usage is read by the target's adapter
 * (`ProviderAdapter.passthroughUsage`), which knows its provider's answer shapes.
 */
import type { Usage } from '../../core/openai-types.js';
import type { UpstreamRelay } from '../attempt.js';

/** How much of a JSON answer is kept to read its model and usage. */
const MAX_JSON_KEPT = 1 << 20;

export interface JsonRead {
  result(): { model: string | undefined; usage: Usage | undefined } | undefined;
}

const reads = new WeakMap<UpstreamRelay, JsonRead>();

/**
 * The reader of a relayed answer's JSON body; undefined when the body is not JSON. The first call taps the
 * relay's body (it keeps a copy as the body goes by); later calls for the same relay share that reader,
 * so the rate-limit step and the pass-through's log read one copy.
 */
export function readJsonAnswer(relay: UpstreamRelay): JsonRead | undefined {
  const known = reads.get(relay);
  if (known) return known;
  const body = relay.body;
  if (typeof body === 'string' || !relay.usageOf) return undefined;
  if (!(relay.headers['content-type'] ?? '').includes('json')) return undefined;
  const usageOf = relay.usageOf;
  const kept: Uint8Array[] = [];
  let bytes = 0;
  let complete = false;
  async function* tap(): AsyncIterable<Uint8Array> {
    for await (const chunk of body as AsyncIterable<Uint8Array>) {
      if (bytes <= MAX_JSON_KEPT) {
        bytes += chunk.byteLength;
        kept.push(chunk);
      }
      yield chunk;
    }
    complete = bytes <= MAX_JSON_KEPT;
  }
  const read: JsonRead = {
    result() {
      if (!complete) return undefined;
      try {
        const parsed = JSON.parse(Buffer.concat(kept).toString('utf8')) as unknown;
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
        const answer = parsed as Record<string, unknown>;
        return {
          // Gemini names the model that answered `modelVersion`.
          model:
            typeof answer.model === 'string'
              ? answer.model
              : typeof answer.modelVersion === 'string'
                ? answer.modelVersion
                : undefined,
          usage: usageOf(answer),
        };
      } catch {
        return undefined;
      }
    },
  };
  relay.body = tap();
  reads.set(relay, read);
  return read;
}
