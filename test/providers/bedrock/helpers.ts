import type { AdapterRequest } from '../../../src/providers/types.js';

export const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';

export const CREDENTIALS = {
  provider: 'bedrock',
  cloudc_region: 'us-east-1',
  cloudc_access_key_id: 'AKIDFAKEBEDROCK',
  cloudc_secret_access_key: 'fake-secret-key',
};

export function bedrockRequest(
  body: Record<string, unknown>,
  overrides: Partial<AdapterRequest> = {},
): AdapterRequest<'chat'> {
  // The body reaches the adapter as the test wrote it, unvalidated: some are bodies the schema would refuse.
  return {
    endpoint: 'chat',
    body: { model: MODEL, messages: [{ role: 'user', content: 'Hi' }], ...body },
    stream: body.stream === true,
    target: { ...CREDENTIALS },
    forwardHeaders: {},
    clientHeaders: {},
    strictCompat: false,
    ...overrides,
  } as AdapterRequest<'chat'>;
}
