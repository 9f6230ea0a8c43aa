/**
 * Reads a pass-through's JSON answer on its way to the client, without holding it back: a copy is kept
 * (up to 1 MiB) and parsed once the body has been relayed, for the `model` and `usage` the log records and
 * rate-limit policies settle token reservations with.
 */
import type { Usage } from '../../core/openai-types.js';

/** How much of a JSON answer is kept to read its model and usage. */
const MAX_JSON_KEPT = 1 << 20;

export interface JsonRead {
  tap(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array>;
  result(): { model: string | undefined; usage: Usage | undefined } | undefined;
}

/** Keeps a copy of a JSON answer on its way to the client (up to MAX_JSON_KEPT) to read it after. */
export function jsonReader(headers: Record<string, string>): JsonRead | undefined {
  if (!(headers['content-type'] ?? '').includes('json')) return undefined;
  const kept: Uint8Array[] = [];
  let bytes = 0;
  let complete = false;
  return {
    async *tap(body) {
      for await (const chunk of body) {
        if (bytes <= MAX_JSON_KEPT) {
          bytes += chunk.byteLength;
          kept.push(chunk);
        }
        yield chunk;
      }
      complete = bytes <= MAX_JSON_KEPT;
    },
    result() {
      if (!complete) return undefined;
      try {
        const parsed = JSON.parse(Buffer.concat(kept).toString('utf8')) as {
          model?: unknown;
          usage?: unknown;
        };
        if (typeof parsed !== 'object' || parsed === null) return undefined;
        return {
          model: typeof parsed.model === 'string' ? parsed.model : undefined,
          usage: isUsage(parsed.usage) ? parsed.usage : undefined,
        };
      } catch {
        return undefined;
      }
    },
  };
}

function isUsage(value: unknown): value is Usage {
  const usage = value as Partial<Usage> | null | undefined;
  return typeof usage?.prompt_tokens === 'number' && typeof usage.total_tokens === 'number';
}
