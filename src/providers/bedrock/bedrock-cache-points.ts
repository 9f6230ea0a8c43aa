import type {
  BedrockCachePoint,
  BedrockContentBlock,
  BedrockPrompt,
  BedrockToolConfig,
} from './bedrock-api-types.js';

/**
 * Anthropic's `cache_control` (on a content part, a message or a tool) as Converse's cache checkpoint, a
 * `cachePoint` block after what it marks. Its `ttl` (`5m`, `1h`) goes with it, and Bedrock judges it as
 * Anthropic would; none for a value that is not a `cache_control` object.
 */
export function cachePointFor(cacheControl: unknown): BedrockCachePoint[] {
  if (cacheControl === null || typeof cacheControl !== 'object') return [];
  const ttl = (cacheControl as { ttl?: unknown }).ttl;
  return [{ cachePoint: { type: 'default', ...(typeof ttl === 'string' ? { ttl } : {}) } }];
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
