import type { AdapterRequest } from '../../../src/providers/types.js';

export function chatRequest(
  body: Record<string, unknown>,
  overrides: Partial<AdapterRequest> = {},
): AdapterRequest {
  return {
    endpoint: 'chat',
    body: { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }], ...body },
    stream: body.stream === true,
    target: { provider: 'anthropic', api_key: 'sk-ant-test' },
    forwardHeaders: {},
    clientHeaders: {},
    strictCompat: false,
    ...overrides,
  };
}
