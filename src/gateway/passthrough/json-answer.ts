/**
 * Reads a pass-through's JSON answer on its way to the client, without holding it back: a copy is kept
 * (up to 1 MiB) and parsed once the body has been relayed, for the `model` and `usage` the log records and
 * rate-limit policies settle token reservations with (whichever provider's shape the usage has).
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
        const parsed = JSON.parse(Buffer.concat(kept).toString('utf8')) as Record<string, unknown>;
        if (typeof parsed !== 'object' || parsed === null) return undefined;
        return {
          model: typeof parsed.model === 'string' ? parsed.model : undefined,
          usage: usageOfAnswer(parsed),
        };
      } catch {
        return undefined;
      }
    },
  };
}

type Counts = Record<string, unknown>;

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;

/**
 * The usage of an answer in whichever provider's shape it comes, as OpenAI counts it: OpenAI's own
 * (`prompt_tokens`), Anthropic's Messages and OpenAI's Responses (`input_tokens`, Anthropic's cache reads
 * and writes counted as input), Bedrock's Converse (`inputTokens`) and Gemini's (`usageMetadata`).
 */
function usageOfAnswer(answer: Counts): Usage | undefined {
  const usage = answer.usage as Counts | null | undefined;
  if (typeof usage === 'object' && usage !== null) {
    if (count(usage.prompt_tokens) !== undefined && count(usage.total_tokens) !== undefined) {
      return usage as unknown as Usage;
    }
    const input = count(usage.input_tokens);
    const output = count(usage.output_tokens);
    if (input !== undefined && output !== undefined) {
      // Anthropic's input_tokens leave out its cache reads and writes; the Responses API's include them.
      const cacheRead = count(usage.cache_read_input_tokens) ?? 0;
      const cacheWrite = count(usage.cache_creation_input_tokens) ?? 0;
      const cached = count((usage.input_tokens_details as Counts | undefined)?.cached_tokens) ?? cacheRead;
      const read = usageOf(input + cacheRead + cacheWrite, output, count(usage.total_tokens));
      read.prompt_tokens_details =
        cacheWrite > 0
          ? { cached_tokens: cached, cache_write_tokens: cacheWrite }
          : { cached_tokens: cached };
      return read;
    }
    const converseInput = count(usage.inputTokens);
    const converseOutput = count(usage.outputTokens);
    if (converseInput !== undefined && converseOutput !== undefined) {
      return usageOf(converseInput, converseOutput, count(usage.totalTokens));
    }
  }
  const metadata = answer.usageMetadata as Counts | null | undefined;
  if (typeof metadata === 'object' && metadata !== null) {
    const prompt = count(metadata.promptTokenCount);
    const total = count(metadata.totalTokenCount);
    if (prompt !== undefined && total !== undefined) {
      return usageOf(prompt, count(metadata.candidatesTokenCount) ?? total - prompt, total);
    }
  }
  return undefined;
}

function usageOf(prompt: number, completion: number, total: number | undefined): Usage {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total ?? prompt + completion };
}
