import type { Usage } from '../../core/openai-types.js';
import type { AnswerUsageReader } from '../shared/answer-usage.js';
import type { GeminiModalityCount, GeminiUsageMetadata } from './google-api-types.js';

/**
 * Gemini's `usageMetadata` → OpenAI usage. `candidatesTokenCount` leaves thoughts out while OpenAI's
 * `completion_tokens` counts reasoning in, so thoughts are added to it (and also reported as
 * `reasoning_tokens`); that keeps `total_tokens` equal to Google's `totalTokenCount` (tool-use prompt
 * tokens join the prompt). Vertex's `trafficType` (Provisioned Throughput or which pay-as-you-go served the
 * call, what the cost reads) is kept as `traffic_type`. Undefined when the metadata carries no counts (Vertex's
 * early stream chunks).
 */
export function convertGoogleUsage(metadata: GeminiUsageMetadata | undefined): Usage | undefined {
  if (!metadata || (metadata.promptTokenCount === undefined && metadata.candidatesTokenCount === undefined)) {
    return undefined;
  }
  const prompt = (metadata.promptTokenCount ?? 0) + (metadata.toolUsePromptTokenCount ?? 0);
  const thoughts = metadata.thoughtsTokenCount ?? 0;
  const completion = (metadata.candidatesTokenCount ?? 0) + thoughts;
  const usage: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
  if (typeof metadata.trafficType === 'string') usage.traffic_type = metadata.trafficType;
  if (metadata.cachedContentTokenCount !== undefined) {
    usage.prompt_tokens_details = { cached_tokens: metadata.cachedContentTokenCount };
  }
  if (metadata.thoughtsTokenCount !== undefined) {
    usage.completion_tokens_details = { reasoning_tokens: thoughts };
  }
  // Audio and image tokens are priced apart from text on some models (docs/cost.md); those read from the
  // cache are in `cached_tokens`, priced as such, so they are left out here (Gemini counts them in both).
  const fresh = (modality: string) =>
    Math.max(
      0,
      modalityCount(metadata.promptTokensDetails, modality) -
        modalityCount(metadata.cacheTokensDetails, modality),
    );
  const audioIn = fresh('AUDIO');
  const imageIn = fresh('IMAGE');
  if (audioIn > 0) usage.prompt_tokens_details = { ...usage.prompt_tokens_details, audio_tokens: audioIn };
  if (imageIn > 0) usage.prompt_tokens_details = { ...usage.prompt_tokens_details, image_tokens: imageIn };
  const audioOut = modalityCount(metadata.candidatesTokensDetails, 'AUDIO');
  if (audioOut > 0) {
    usage.completion_tokens_details = { ...usage.completion_tokens_details, audio_tokens: audioOut };
  }
  return usage;
}

function modalityCount(details: GeminiModalityCount[] | undefined, modality: string): number {
  let count = 0;
  for (const detail of details ?? []) {
    if (detail.modality === modality && typeof detail.tokenCount === 'number') count += detail.tokenCount;
  }
  return count;
}

/** A generateContent answer's usage (`usageMetadata`); undefined for an answer that is not one. Grounding
 * with Google Search, which Google bills per grounded prompt or per search query depending on the model,
 * is counted from its candidates' `groundingMetadata.webSearchQueries`: one grounded prompt, and its
 * queries as web searches. */
export const geminiAnswerUsage: AnswerUsageReader = (answer) => {
  const metadata = answer.usageMetadata;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return undefined;
  const usage = convertGoogleUsage(metadata as GeminiUsageMetadata);
  const queries = searchQueries(answer.candidates);
  return usage && queries > 0
    ? { ...usage, server_tool_use: { web_search_requests: queries, grounded_prompts: 1 } }
    : usage;
};

function searchQueries(candidates: unknown): number {
  if (!Array.isArray(candidates)) return 0;
  let count = 0;
  for (const candidate of candidates) {
    const queries = (candidate as { groundingMetadata?: { webSearchQueries?: unknown } } | null)
      ?.groundingMetadata?.webSearchQueries;
    if (Array.isArray(queries)) count += queries.length;
  }
  return count;
}
