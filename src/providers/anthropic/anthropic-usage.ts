import type { Usage } from '../../core/openai-types.js';
import type { AnthropicUsage } from './anthropic-api-types.js';

/**
 * Anthropic's `input_tokens` counts only the tokens after the last cache breakpoint; cache reads and
 * cache writes are reported apart. OpenAI's `prompt_tokens` is the whole prompt, so the three are added,
 * and the cache reads are also reported as `prompt_tokens_details.cached_tokens`, the cache writes as
 * `cache_write_tokens`, and those of them kept an hour (`cache_creation.ephemeral_1h_input_tokens`) as
 * `cache_write_1h_tokens` (not OpenAI's: writes are priced apart, an hour's higher, docs/cost.md). The
 * server tools' uses (`server_tool_use`: web searches, web fetches), billed per use, are kept as they are.
 * The thinking tokens newer models name (`output_tokens_details.thinking_tokens`, part of `output_tokens`)
 * are OpenAI's `completion_tokens_details.reasoning_tokens`.
 */
export function toOpenAIUsage(usage: AnthropicUsage | undefined): Usage {
  const input = usage?.input_tokens ?? 0;
  const cacheRead = usage?.cache_read_input_tokens ?? 0;
  const cacheWrite = usage?.cache_creation_input_tokens ?? 0;
  const prompt = input + cacheRead + cacheWrite;
  const completion = usage?.output_tokens ?? 0;
  const hour = Math.min(usage?.cache_creation?.ephemeral_1h_input_tokens ?? 0, cacheWrite);
  const searches = usage?.server_tool_use?.web_search_requests ?? 0;
  const fetches = usage?.server_tool_use?.web_fetch_requests ?? 0;
  const thinking = Math.min(usage?.output_tokens_details?.thinking_tokens ?? 0, completion);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details:
      cacheWrite > 0
        ? {
            cached_tokens: cacheRead,
            cache_write_tokens: cacheWrite,
            ...(hour > 0 && { cache_write_1h_tokens: hour }),
          }
        : { cached_tokens: cacheRead },
    ...(thinking > 0 && { completion_tokens_details: { reasoning_tokens: thinking } }),
    ...((searches > 0 || fetches > 0) && {
      server_tool_use: {
        ...(searches > 0 && { web_search_requests: searches }),
        ...(fetches > 0 && { web_fetch_requests: fetches }),
      },
    }),
  };
}

/** Stream usage arrives in parts (message_start, then message_delta): later non-null values win. */
export function mergeAnthropicUsage(
  current: AnthropicUsage | undefined,
  update: AnthropicUsage | undefined,
): AnthropicUsage | undefined {
  if (!update) return current;
  const merged: AnthropicUsage = { ...current };
  for (const key of [
    'input_tokens',
    'output_tokens',
    'cache_creation_input_tokens',
    'cache_read_input_tokens',
  ] as const) {
    const value = update[key];
    if (typeof value === 'number') merged[key] = value;
  }
  if (update.cache_creation) merged.cache_creation = update.cache_creation;
  if (update.server_tool_use) merged.server_tool_use = update.server_tool_use;
  if (update.output_tokens_details) merged.output_tokens_details = update.output_tokens_details;
  if (typeof update.service_tier === 'string') merged.service_tier = update.service_tier;
  return merged;
}
