import type { ChatCompletionChunk, Usage } from '../../core/openai-types.js';
import type { AdapterRequest, StreamOutput, StreamTranslator, UpstreamEvent } from '../types.js';
import { isOpenAIStreamError, openAIStreamError } from './openai-error.js';
import { createContentListRepair, createToolCallDeltaRepair, repairUsage } from './openai-schema-repair.js';

/**
 * OpenAI-wire streams need no translation: each `data:` payload is forwarded as it came (its text is kept
 * in `raw`), but it is parsed so the pipeline can see usage, finish reasons, errors in a 200 stream and
 * malformed chunks. A chunk whose tool-call deltas or content break OpenAI's schema is repaired and sent
 * re-serialised (./openai-schema-repair.ts).
 */
export function createOpenAIStreamTranslator(req: AdapterRequest, provider: string): StreamTranslator {
  let usage: Usage | undefined;
  let serviceTier: string | undefined;
  const expectedChoices =
    (req.endpoint === 'chat' || req.endpoint === 'completions') && typeof req.body.n === 'number'
      ? req.body.n
      : 1;
  const finishedChoices = new Set<number>();
  const repairToolCalls = createToolCallDeltaRepair();
  const repairContent = createContentListRepair(req.strictCompat);

  const push = (event: UpstreamEvent): StreamOutput[] => {
    if (event.kind !== 'sse') return [{ type: 'malformed', detail: 'unexpected binary event' }];
    const data = event.data;
    if (data === '[DONE]') return [{ type: 'done' }];
    if (data.length === 0) return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return [{ type: 'malformed', detail: `not JSON: ${data.slice(0, 200)}` }];
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return [{ type: 'malformed', detail: `not an object: ${data.slice(0, 200)}` }];
    }
    const object = parsed as Record<string, unknown>;
    if (isOpenAIStreamError(event.event, object)) {
      return [{ type: 'error', error: openAIStreamError(provider, object) }];
    }
    if (!Array.isArray(object.choices)) {
      return [{ type: 'malformed', detail: `chunk without choices: ${data.slice(0, 200)}` }];
    }
    if (typeof object.service_tier === 'string') serviceTier = object.service_tier;
    let chunk = object as unknown as ChatCompletionChunk;
    let counted = false;
    if (chunk.usage) {
      usage = repairUsage(chunk.usage);
      if (usage !== chunk.usage) {
        chunk = { ...chunk, usage };
        counted = true;
      }
    }
    for (const choice of chunk.choices) {
      if (choice && choice.finish_reason) finishedChoices.add(choice.index);
    }
    const withCalls = repairToolCalls(chunk);
    const repaired = repairContent(withCalls ?? chunk) ?? withCalls ?? (counted ? chunk : undefined);
    return [repaired ? { type: 'chunk', chunk: repaired } : { type: 'chunk', chunk, raw: data }];
  };

  return {
    push,
    end: () => [],
    usage: () => usage,
    serviceTier: () => serviceTier,
    finished: () => finishedChoices.size >= expectedChoices,
  };
}
