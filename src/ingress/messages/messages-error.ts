/**
 * Errors on /v1/messages in Anthropic's shape, `{"type":"error","error":{"type","message"}}`, with
 * Anthropic's error types: the provider's own when it is Anthropic's API (its type travels as the error's
 * code), else the type Anthropic gives that HTTP status. The status is the error's own.
 */
import { GatewayError, ProviderError } from '../../core/errors.js';
import type { MessagesErrorBody } from '../../core/messages-types.js';

const ANTHROPIC_ERROR_TYPES = new Set([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'timeout_error',
  'overloaded_error',
]);

export function messagesErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 408:
    case 504:
      return 'timeout_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

export function messagesErrorBody(error: GatewayError | ProviderError): MessagesErrorBody {
  const own = error instanceof ProviderError && error.code !== null && ANTHROPIC_ERROR_TYPES.has(error.code);
  return {
    type: 'error',
    error: { type: own ? (error.code as string) : messagesErrorType(error.status), message: error.message },
  };
}
