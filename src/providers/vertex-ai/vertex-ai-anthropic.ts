import type { AdapterRequest } from '../types.js';
import { toAnthropicMessagesBody } from '../anthropic/index.js';
import { vertexModelId } from './vertex-ai-urls.js';

/** The API version Vertex AI wants in the body of Anthropic calls (in place of the header). */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

const PUBLISHER_PREFIX = 'anthropic.';

/** Anthropic models on Vertex are named `claude-…`, which users also write with the publisher's prefix
 * (`anthropic.claude-…`) or as a resource name (`publishers/anthropic/models/claude-…`); everything else is
 * a Gemini (Google) model. */
export function isAnthropicModel(model: string): boolean {
  return vertexAnthropicModelId(model) !== undefined;
}

/** The id Vertex addresses an Anthropic model by (`claude-…`, without the `anthropic.` prefix), or
 * undefined when the model is not Anthropic's. */
export function vertexAnthropicModelId(model: string): string | undefined {
  const named = vertexModelId(model);
  const id = named.startsWith(PUBLISHER_PREFIX) ? named.slice(PUBLISHER_PREFIX.length) : named;
  return id.startsWith('claude-') ? id : undefined;
}

/** The Messages body without `model` (it is in the URL) and with Vertex's `anthropic_version`. */
export function toVertexAnthropicBody(req: AdapterRequest<'chat'>): Record<string, unknown> {
  return {
    anthropic_version: VERTEX_ANTHROPIC_VERSION,
    ...toAnthropicMessagesBody(req, { includeModel: false }),
  };
}

/** Anthropic beta flags are honoured by Vertex as a header too. */
export function vertexAnthropicHeaders(req: AdapterRequest): Record<string, string> {
  const beta = req.clientHeaders['anthropic-beta'];
  if (beta === undefined) return {};
  return { 'anthropic-beta': Array.isArray(beta) ? beta.join(',') : beta };
}
