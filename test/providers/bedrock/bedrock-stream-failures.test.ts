import { describe, expect, it } from 'vitest';
import { bedrockAdapter } from '../../../src/providers/bedrock/index.js';
import type { AdapterRequest, StreamOutput } from '../../../src/providers/types.js';
import { createStreamTranslator } from '../operations.js';
import { bedrockRequest } from './helpers.js';

const serviceError = {
  kind: 'message' as const,
  headers: {
    ':message-type': 'error',
    ':error-code': 'InternalFailure',
    ':error-message': 'The request processing has failed',
  },
  payload: '',
};
const exception = {
  kind: 'message' as const,
  headers: { ':message-type': 'exception', ':exception-type': 'throttlingException' },
  payload: { message: 'Too many tokens' },
};

function translatorOf(endpoint: 'chat' | 'messages') {
  const req = bedrockRequest({ stream: true }, { endpoint } as Partial<AdapterRequest>);
  return createStreamTranslator(bedrockAdapter, req);
}

describe('Bedrock event-stream failures', () => {
  it.each(['chat', 'messages'] as const)(
    'ends a %s stream with the failure of an error or exception message',
    (endpoint) => {
      const [error] = translatorOf(endpoint).push(serviceError) as Extract<StreamOutput, { type: 'error' }>[];
      expect(error).toMatchObject({
        type: 'error',
        error: { status: 500, code: 'InternalFailure', message: 'The request processing has failed' },
      });
      const [thrown] = translatorOf(endpoint).push(exception) as Extract<StreamOutput, { type: 'error' }>[];
      expect(thrown).toMatchObject({
        type: 'error',
        error: { status: 429, code: 'throttlingException', message: 'Too many tokens' },
      });
    },
  );
});
