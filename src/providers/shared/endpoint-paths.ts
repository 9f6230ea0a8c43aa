import type { EndpointKind } from '../types.js';

/** The OpenAI path of each operation, after the version (`/v1`): what the client called and what
 * OpenAI-wire providers are called on. */
export const ENDPOINT_PATHS: Readonly<Record<EndpointKind, string>> = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  messages: '/messages',
  count_tokens: '/messages/count_tokens',
  responses: '/responses',
};
