import type { AdapterRequest } from '../types.js';

/** Fields of the gateway's own that OpenAI-wire providers do not know. */
const GATEWAY_ONLY_FIELDS = ['thinking'] as const;

/**
 * The upstream body for OpenAI-wire providers: the client's body as it is (after override_params), less
 * the gateway's own fields. The reasoning option is sent only to providers that take it.
 */
export function toOpenAIBody(req: AdapterRequest, options: { acceptsThinking?: boolean } = {}): string {
  const body = req.body;
  if (options.acceptsThinking || !GATEWAY_ONLY_FIELDS.some((field) => field in body)) {
    return JSON.stringify(body);
  }
  const copy: Record<string, unknown> = { ...body };
  for (const field of GATEWAY_ONLY_FIELDS) delete copy[field];
  return JSON.stringify(copy);
}
