import type { AdapterRequest } from '../../../src/providers/types.js';

export function chatRequest(
  body: Record<string, unknown>,
  overrides: Partial<AdapterRequest> = {},
): AdapterRequest<'chat'> {
  // The body reaches the adapter as the test wrote it, unvalidated: some are bodies the schema would refuse.
  return {
    endpoint: 'chat',
    body: { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }], ...body },
    stream: body.stream === true,
    target: { provider: 'anthropic', api_key: 'sk-ant-test' },
    forwardHeaders: {},
    clientHeaders: {},
    strictCompat: false,
    ...overrides,
  } as AdapterRequest<'chat'>;
}
