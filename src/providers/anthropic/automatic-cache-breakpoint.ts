import {
  checkCacheBreakpoints,
  isCacheMark,
  MAX_CACHE_BREAKPOINTS,
  messagesCacheBreakpoints,
} from '../../core/cache-breakpoints.js';
import type { MessagesContentBlock, MessagesRequest } from '../../core/schemas/index.js';

/** Thinking blocks take no breakpoint. */
const UNCACHEABLE = new Set(['thinking', 'redacted_thinking']);

/**
 * A Messages request with its request-level `cache_control` (automatic caching) made what Anthropic makes of
 * it, for a host that does not take the field (Bedrock and Vertex AI refuse it, "Extra inputs are not
 * permitted") or a translation: a breakpoint on the last cacheable block — the last message's last block that
 * is not thinking — unless that block has one of its own. Automatic caching takes one of the request's 4
 * breakpoints: when the client's own already fill them, it adds none (a fifth would be refused; those 4
 * cache the prompt). Being the last, it may not be kept longer than one before it (a `1h` after a `5m`),
 * which Anthropic and Bedrock refuse: such a request is refused first, naming `cache_control.ttl`. The
 * request-level field itself is left out.
 */
export function withAutomaticCacheBreakpoint(request: MessagesRequest): MessagesRequest {
  const { cache_control: cacheControl, ...rest } = request;
  if (!isCacheMark(cacheControl)) return request;
  const last = rest.messages[rest.messages.length - 1];
  const explicit = messagesCacheBreakpoints(rest);
  if (!last || explicit.length >= MAX_CACHE_BREAKPOINTS) return rest;
  const blocks: MessagesContentBlock[] =
    typeof last.content === 'string'
      ? [{ type: 'text', text: last.content }]
      : [...(last.content as MessagesContentBlock[])];
  const k = blocks.findLastIndex((block) => !UNCACHEABLE.has(block.type));
  const block = blocks[k];
  if (!block || block.cache_control) return rest;
  checkCacheBreakpoints([...explicit, { param: 'cache_control', cacheControl }]);
  blocks[k] = { ...block, cache_control: cacheControl as MessagesContentBlock['cache_control'] };
  return { ...rest, messages: [...rest.messages.slice(0, -1), { ...last, content: blocks }] };
}
