/** Whether a target has an API natively, or gets the request translated (steps/messages-step.ts,
 * steps/responses-step.ts): its adapter has a handler for the operation that accepts the request. */
import type { EndpointKind, ProviderAdapter, RequestBodies } from '../../providers/types.js';

export function hasNatively<K extends EndpointKind>(
  adapter: ProviderAdapter,
  kind: K,
  body: RequestBodies[K],
): boolean {
  const handler = adapter.operations[kind];
  return handler !== undefined && (handler.accepts?.(body) ?? true);
}
