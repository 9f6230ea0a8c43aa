/**
 * The endpoints a managed batch may target: every model operation of the endpoint registry that answers
 * with one JSON object (a batch line cannot stream), by its full path (`/v1/chat/completions`).
 */
import { ENDPOINTS, type EndpointDescriptor } from '../endpoints.js';

export function batchEndpoints(): Map<string, EndpointDescriptor> {
  return new Map(Object.values(ENDPOINTS).map((endpoint) => [`/v1${endpoint.path}`, endpoint]));
}

export function batchEndpoint(path: string): EndpointDescriptor | undefined {
  return batchEndpoints().get(path);
}
