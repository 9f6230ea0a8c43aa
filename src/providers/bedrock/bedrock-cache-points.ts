import { checkCacheBreakpoints, type CacheBreakpoint } from '../../core/cache-breakpoints.js';
import { markedAt, markOrigin } from '../shared/cache-mark-origins.js';
import type {
  BedrockCachePoint,
  BedrockContentBlock,
  BedrockPrompt,
  BedrockToolConfig,
} from './bedrock-api-types.js';

/**
 * Anthropic's `cache_control` (on a content part, a message or a tool) as Converse's cache checkpoint, a
 * `cachePoint` block after what it marks. Its `ttl` (`5m`, `1h`) goes with it, and Bedrock judges it as
 * Anthropic would; none for a value that is not a `cache_control` object. `param` is the chat field that
 * carries it (`messages[2].cache_control`), which a refusal of the cache points names.
 */
export function cachePointFor(cacheControl: unknown, param: string): BedrockCachePoint[] {
  if (cacheControl === null || typeof cacheControl !== 'object') return [];
  const ttl = (cacheControl as { ttl?: unknown }).ttl;
  return [markedAt({ cachePoint: { type: 'default', ...(typeof ttl === 'string' ? { ttl } : {}) } }, param)];
}

/**
 * Bedrock's rules on cache points, Anthropic's (at most 4; none kept longer than one before it), judged on the
 * points the model is sent, in the order Converse reads them: toolConfig, system, messages. A point that
 * breaks them is refused naming the chat field it came from.
 */
export function checkCachePoints(
  system: readonly object[],
  messages: BedrockPrompt['messages'],
  tools: readonly object[] = [],
): void {
  const points: CacheBreakpoint[] = [...tools, ...system, ...messages.flatMap((message) => message.content)]
    .filter(isCachePoint)
    .map((block) => ({
      param: markOrigin(block, 'messages'),
      cacheControl: (block as BedrockCachePoint).cachePoint,
    }));
  checkCacheBreakpoints(points);
}

const isCachePoint = (block: object): boolean => 'cachePoint' in block;

/** The prompt without its cache points, for a model that takes none (Converse refuses them). */
export function promptWithoutCachePoints(prompt: BedrockPrompt): BedrockPrompt {
  return {
    system: prompt.system.filter((block) => !isCachePoint(block)),
    messages: prompt.messages.map((message) => ({
      ...message,
      content: message.content.filter((block: BedrockContentBlock) => !isCachePoint(block)),
    })),
  };
}

/** The tools without their cache points, for a model that takes them in system and messages only (Nova). */
export function toolsWithoutCachePoints(config: BedrockToolConfig): BedrockToolConfig {
  return { ...config, tools: config.tools.filter((tool) => !isCachePoint(tool)) };
}
