/**
 * Drops a relayed answer nobody will read (the client left before it was relayed). The body is a chain of
 * async generators over the provider's response stream (the rate-limit step's settlement, the JSON tap):
 * a generator that has not started ignores `return()`, so destroying a stream made from the outermost one
 * would leave the provider's response unread, holding its connection, and the steps' `finally` blocks
 * (a token reservation's settlement) unrun. Starting it and then returning runs them all, and the
 * provider's stream is destroyed by the iteration that reached it.
 */
export function discardBody(body: AsyncIterable<Uint8Array>): void {
  const iterator = body[Symbol.asyncIterator]();
  const close = () => iterator.return?.().catch(() => undefined);
  iterator.next().then(close, () => undefined);
}
