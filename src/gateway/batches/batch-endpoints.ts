/**
 * The endpoints a managed batch may target, by their full path (`/v1/chat/completions`): the OpenAI model
 * operations of the endpoint registry, whose lines answer with one JSON object in OpenAI's batch line shape.
 * Anthropic's Messages endpoints are in the registry too but are not OpenAI batch endpoints.
 */
import { ENDPOINTS, type EndpointDescriptor } from '../endpoints.js';

const BATCHABLE = ['chat', 'completions', 'embeddings'] as const;

const BY_PATH = new Map<string, EndpointDescriptor>(
  BATCHABLE.map((kind) => [`/v1${ENDPOINTS[kind].path}`, ENDPOINTS[kind]]),
);

export function batchEndpoints(): ReadonlyMap<string, EndpointDescriptor> {
  return BY_PATH;
}

export function batchEndpoint(path: string): EndpointDescriptor | undefined {
  return BY_PATH.get(path);
}
