import {
  checkCacheBreakpoints,
  isCacheMark,
  MAX_CACHE_BREAKPOINTS,
  messagesCacheBreakpoints,
} from '../../core/cache-breakpoints.js';
import type { MessagesContentBlock, MessagesRequest } from '../../core/schemas/index.js';

/** Thinking blocks take no breakpoint, nor an empty text (an empty prefill): Anthropic refuses both. */
const cacheable = (block: MessagesContentBlock): boolean =>
  block.type !== 'thinking' &&
  block.type !== 'redacted_thinking' &&
  !(block.type === 'text' && block.text === '');

/** The blocks of a message's content (a string is one text block). */
const blocksOf = (content: unknown): MessagesContentBlock[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : [...(content as MessagesContentBlock[])];

/**
 * A Messages request with its request-level `cache_control` (automatic caching) made what Anthropic makes of
 * it, for a host that does not take the field (Bedrock and Vertex AI refuse it, "Extra inputs are not
 * permitted") or a translation: a breakpoint on the last cacheable block — the last block that is neither
 * thinking nor an empty text (an empty prefill), in the last message that has one — unless that block has
 * one of its own. Automatic caching takes one of the request's 4 breakpoints: when the client's own already
 * fill them, it adds none (a fifth would be refused; those 4 cache the prompt). Being the last, it may not
 * be kept longer than one before it (a `1h` after a `5m`), which Anthropic and Bedrock refuse: such a
 * request is refused first, naming `cache_control.ttl`. The request-level field itself is left out.
 */
export function withAutomaticCacheBreakpoint(request: MessagesRequest): MessagesRequest {
  const { cache_control: cacheControl, ...rest } = request;
  if (!isCacheMark(cacheControl)) return request;
  const explicit = messagesCacheBreakpoints(rest);
  if (explicit.length >= MAX_CACHE_BREAKPOINTS) return rest;
  const i = rest.messages.findLastIndex((message) => blocksOf(message.content).some(cacheable));
  if (i < 0) return rest;
  const blocks = blocksOf(rest.messages[i].content);
  const k = blocks.findLastIndex(cacheable);
  const block = blocks[k];
  if (block.cache_control) return rest;
  checkCacheBreakpoints([...explicit, { param: 'cache_control', cacheControl }]);
  blocks[k] = { ...block, cache_control: cacheControl as MessagesContentBlock['cache_control'] };
  const messages = [...rest.messages];
  messages[i] = { ...messages[i], content: blocks };
  return { ...rest, messages };
}
