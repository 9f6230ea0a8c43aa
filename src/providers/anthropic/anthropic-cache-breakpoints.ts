import { checkCacheBreakpoints, isCacheMark, type CacheBreakpoint } from '../../core/cache-breakpoints.js';
import { markOrigin } from '../shared/cache-mark-origins.js';
import type { AnthropicContentBlock, AnthropicMessage, AnthropicTool } from './anthropic-api-types.js';

/**
 * Anthropic's rules on prompt-caching breakpoints (at most 4; none kept longer than one before it), judged on
 * the body a chat request became, in the order Anthropic reads it: tools, system (the system and developer
 * messages, wherever they were), messages, a tool result's blocks before the result. A breakpoint that breaks
 * them is refused naming the chat request's field it came from.
 */
export function checkAnthropicCacheBreakpoints(body: {
  tools?: AnthropicTool[];
  system?: AnthropicContentBlock[];
  messages: AnthropicMessage[];
}): void {
  const breakpoints: CacheBreakpoint[] = [];
  const add = (block: AnthropicContentBlock | AnthropicTool, fallback: string) => {
    const cacheControl = 'cache_control' in block ? block.cache_control : undefined;
    if (isCacheMark(cacheControl)) breakpoints.push({ param: markOrigin(block, fallback), cacheControl });
  };
  body.tools?.forEach((tool) => add(tool, 'tools'));
  body.system?.forEach((block) => add(block, 'messages'));
  for (const message of body.messages) {
    for (const block of message.content) {
      if (block.type === 'tool_result' && Array.isArray(block.content)) {
        block.content.forEach((inner) => add(inner, 'messages'));
      }
      add(block, 'messages');
    }
  }
  checkCacheBreakpoints(breakpoints);
}
