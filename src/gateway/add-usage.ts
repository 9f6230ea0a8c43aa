/** The usage of calls made for one attempt (a fan-out of `n`, embeddings split into calls), summed. */
import type { Usage } from '../core/openai-types.js';

/**
 * `total` and `next` summed, every count of their details too (cached, cache-write, audio, image, reasoning
 * tokens, tool uses…). An embedding's usage has no completion tokens: the sum has none unless a side does.
 */
export function addUsage(total: Usage | undefined, next: Usage | undefined): Usage | undefined {
  if (!next) return total;
  if (!total) return structuredClone(next);
  const usage = {
    prompt_tokens: total.prompt_tokens + next.prompt_tokens,
    total_tokens: total.total_tokens + next.total_tokens,
  } as Usage;
  if (typeof total.completion_tokens === 'number' || typeof next.completion_tokens === 'number')
    usage.completion_tokens = (total.completion_tokens ?? 0) + (next.completion_tokens ?? 0);
  const prompt = addCounts(total.prompt_tokens_details, next.prompt_tokens_details);
  if (prompt) usage.prompt_tokens_details = prompt;
  const completion = addCounts(total.completion_tokens_details, next.completion_tokens_details);
  if (completion) usage.completion_tokens_details = completion;
  const tools = addCounts(total.server_tool_use, next.server_tool_use);
  if (tools) usage.server_tool_use = tools;
  // Calls served on different capacity (one from Provisioned Throughput, one overflowing to pay-as-you-go)
  // name none together: the sum is priced as billed per token, never as prepaid in full.
  if (total.traffic_type !== undefined && total.traffic_type === next.traffic_type)
    usage.traffic_type = total.traffic_type;
  return usage;
}

function addCounts<T extends Partial<Record<string, number>>>(
  a: T | undefined,
  b: T | undefined,
): T | undefined {
  if (!a) return b && { ...b };
  const sum: Partial<Record<string, number>> = { ...a };
  for (const [key, value] of Object.entries(b ?? {})) {
    if (typeof value === 'number') sum[key] = (sum[key] ?? 0) + value;
  }
  return sum as T;
}
