/**
 * Anthropic's rules for prompt-caching breakpoints (`cache_control`), which Bedrock's cache points follow too:
 * at most 4 in a request, and, in the order the request is read — tools, then system, then messages — none
 * kept longer than one before it (a `ttl` of `1h` after one of `5m`, the default). Anthropic answers 400 to a
 * request that breaks them ("A maximum of 4 blocks with cache_control may be provided. Found 5."; "a
 * ttl='1h' cache_control block must not come after a ttl='5m' cache_control block"), Bedrock a validation
 * error: the gateway refuses such a request before any call, naming the client's field.
 */
import { GatewayError } from './errors.js';

export const MAX_CACHE_BREAKPOINTS = 4;

/** A breakpoint: the client's field that carries it (`…cache_control`) and its value. */
export interface CacheBreakpoint {
  param: string;
  cacheControl: unknown;
}

/** The TTLs Anthropic and Bedrock take, in minutes; another is the provider's to refuse. */
const TTL_MINUTES = new Map([
  ['5m', 5],
  ['1h', 60],
]);

/** A `cache_control` value's TTL: its `ttl`, or the default five minutes. */
function cacheTtl(cacheControl: unknown): string {
  const ttl = (cacheControl as { ttl?: unknown } | null)?.ttl;
  return typeof ttl === 'string' ? ttl : '5m';
}

/** Whether a value marks a breakpoint (a `cache_control` of `null` marks none). */
export const isCacheMark = (cacheControl: unknown): boolean =>
  typeof cacheControl === 'object' && cacheControl !== null;

/** The request's breakpoints, in the order it is read (tools, system, messages), or a 400 naming the field. */
export function checkCacheBreakpoints(breakpoints: readonly CacheBreakpoint[]): void {
  const extra = breakpoints[MAX_CACHE_BREAKPOINTS];
  if (extra !== undefined) {
    throw new GatewayError(
      'invalid_body',
      `${extra.param}: a maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided, found ${breakpoints.length}`,
      { param: extra.param },
    );
  }
  let shortest: { ttl: string; minutes: number } | undefined;
  for (const { param, cacheControl } of breakpoints) {
    const ttl = cacheTtl(cacheControl);
    const minutes = TTL_MINUTES.get(ttl);
    if (minutes === undefined) continue;
    if (shortest !== undefined && minutes > shortest.minutes) {
      throw new GatewayError(
        'invalid_body',
        `${param}.ttl: a ttl='${ttl}' cache_control block must not come after a ttl='${shortest.ttl}' cache_control block (blocks are read in the order tools, system, messages)`,
        { param: `${param}.ttl` },
      );
    }
    if (shortest === undefined || minutes < shortest.minutes) shortest = { ttl, minutes };
  }
}

interface MarkedBlock {
  type?: unknown;
  cache_control?: unknown;
  content?: unknown;
  source?: unknown;
}

/** The breakpoints of a block and of the blocks inside it (a tool result's, a content document's), these
 * first: the block's own covers them. */
function blockBreakpoints(block: MarkedBlock, param: string): CacheBreakpoint[] {
  const inner: CacheBreakpoint[] = [];
  const nested = (blocks: unknown, at: string) => {
    if (Array.isArray(blocks)) {
      (blocks as MarkedBlock[]).forEach((b, k) => inner.push(...blockBreakpoints(b, `${at}[${k}]`)));
    }
  };
  if (block.type === 'tool_result') nested(block.content, `${param}.content`);
  const source = block.source as { type?: unknown; content?: unknown } | undefined;
  if (block.type === 'document' && source?.type === 'content')
    nested(source.content, `${param}.source.content`);
  return isCacheMark(block.cache_control)
    ? [...inner, { param: `${param}.cache_control`, cacheControl: block.cache_control }]
    : inner;
}

/** An Anthropic Messages request, as far as its breakpoints go. */
export interface MessagesPrompt {
  tools?: ReadonlyArray<{ cache_control?: unknown }>;
  system?: unknown;
  messages: ReadonlyArray<{ content: unknown }>;
}

/** The explicit breakpoints of a Messages request (those on its tools and blocks), in the order it is read. */
export function messagesCacheBreakpoints(request: MessagesPrompt): CacheBreakpoint[] {
  const out: CacheBreakpoint[] = [];
  request.tools?.forEach((tool, i) => {
    if (isCacheMark(tool.cache_control)) {
      out.push({ param: `tools[${i}].cache_control`, cacheControl: tool.cache_control });
    }
  });
  if (Array.isArray(request.system)) {
    (request.system as MarkedBlock[]).forEach((block, j) =>
      out.push(...blockBreakpoints(block, `system[${j}]`)),
    );
  }
  request.messages.forEach((message, i) => {
    if (!Array.isArray(message.content)) return;
    (message.content as MarkedBlock[]).forEach((block, j) =>
      out.push(...blockBreakpoints(block, `messages[${i}].content[${j}]`)),
    );
  });
  return out;
}
