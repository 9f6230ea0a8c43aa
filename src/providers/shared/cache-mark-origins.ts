/**
 * Where each prompt-caching breakpoint of a translated request came from: the chat request's field
 * (`messages[2].content[0].cache_control`, `tools[1].cache_control`), recorded on the provider's block that
 * carries it (an Anthropic block, a Converse cachePoint) when the translation makes it. A translation moves
 * blocks (system and developer messages to the system prompt, turns merged), so its breakpoints are judged on
 * what it made, in the provider's order, and a refusal names the client's field from here.
 */
const origins = new WeakMap<object, string>();

/** The block, recorded as carrying the breakpoint of the client's field `param`. */
export function markedAt<T extends object>(block: T, param: string): T {
  origins.set(block, param);
  return block;
}

/** The client's field a block's breakpoint came from; `fallback` for a block the translation did not record. */
export function markOrigin(block: object, fallback: string): string {
  return origins.get(block) ?? fallback;
}
