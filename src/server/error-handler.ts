/**
 * Maps every error to the OpenAI error object, once. The gateway's own errors carry
 * `x-gateway-error-source: gateway`; provider errors (kept with their status) carry `provider`.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ERROR_SOURCE_HEADER, GatewayError, ProviderError } from '../core/errors.js';

/** Fastify's own errors (body parsing, limits) in our vocabulary. */
function fromFastify(error: FastifyError): GatewayError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('invalid_json', `The body is not valid JSON: ${error.message}`);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('payload_too_large', 'The request body is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('unsupported_media_type', 'Send the body as application/json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('invalid_body', 'Content-Length does not match the body');
    case 'FST_ERR_BAD_URL':
      return new GatewayError('invalid_body', 'The path is not valid percent-encoded UTF-8');
    default:
      break;
  }
  if (error instanceof SyntaxError || error.name === 'SyntaxError') {
    return new GatewayError('invalid_json', `The body is not valid JSON: ${error.message}`);
  }
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return new GatewayError('invalid_body', error.message);
  }
  return undefined;
}

export function toGatewayOrProviderError(error: unknown): GatewayError | ProviderError {
  if (error instanceof GatewayError || error instanceof ProviderError) return error;
  const mapped = fromFastify(error as FastifyError);
  if (mapped) return mapped;
  return new GatewayError('internal_error', 'The gateway failed to handle the request', { cause: error });
}

export function createErrorHandler(logger: Logger) {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply): void => {
    const mapped = toGatewayOrProviderError(error);
    if (mapped instanceof GatewayError && mapped.code === 'internal_error') {
      logger.error({ err: error, method: request.method, url: request.url.split('?')[0] }, 'unhandled error');
    }
    reply.header(ERROR_SOURCE_HEADER, mapped instanceof ProviderError ? 'provider' : 'gateway');
    reply.headers(mapped.headers);
    void reply.code(mapped.status).type('application/json').send(JSON.stringify(mapped.toBody()));
  };
}
