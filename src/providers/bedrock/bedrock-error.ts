import { ProviderError } from '../../core/errors.js';
import type { UpstreamErrorResponse } from '../types.js';
import { retryAfterMs } from '../shared/retry-after.js';
import { withContextLengthCode } from '../shared/context-length.js';

/**
 * Statuses for exceptions that arrive inside a 200 event stream, where no HTTP status is left to read.
 * They are the statuses Bedrock gives the same exceptions on a plain call.
 */
const STATUS_BY_EXCEPTION: Record<string, number> = {
  throttlingexception: 429,
  servicequotaexceededexception: 429,
  modelstreamerrorexception: 424,
  modelerrorexception: 424,
  internalserverexception: 500,
  serviceunavailableexception: 503,
  modelnotreadyexception: 429,
  modeltimeoutexception: 408,
  validationexception: 400,
  accessdeniedexception: 403,
  resourcenotfoundexception: 404,
};

export function bedrockStatusForException(name: string): number {
  return STATUS_BY_EXCEPTION[name.toLowerCase()] ?? 500;
}

/**
 * A non-2xx Bedrock answer → ProviderError. The exception name comes from `x-amzn-errortype` (before its
 * first `:`) or the body's `__type`; the message from the body's `message` / `Message`.
 */
export function bedrockErrorFromResponse(provider: string, res: UpstreamErrorResponse): ProviderError {
  let message: string | undefined;
  let typeName: string | undefined;
  try {
    const body = JSON.parse(res.bodyText) as Record<string, unknown>;
    const text = body.message ?? body.Message;
    if (typeof text === 'string') message = text;
    if (typeof body.__type === 'string') typeName = body.__type.split('#').pop();
  } catch {
    // not JSON: the raw text is the message
  }
  const header = res.headers['x-amzn-errortype'];
  if (header) typeName = header.split(':')[0];
  const error = new ProviderError({
    status: res.status,
    provider,
    message: message ?? (res.bodyText.trim().slice(0, 500) || `${provider} answered ${res.status}`),
    code: typeName ?? null,
    retryAfterMs: retryAfterMs(res.headers),
    headers: res.headers['x-amzn-requestid'] ? { 'x-amzn-requestid': res.headers['x-amzn-requestid'] } : {},
  });
  return withContextLengthCode(error);
}

/** An exception message inside a ConverseStream body. */
export function bedrockStreamException(provider: string, name: string, payload: unknown): ProviderError {
  const text = (payload as { message?: unknown; Message?: unknown } | undefined) ?? {};
  const message =
    typeof text.message === 'string'
      ? text.message
      : typeof text.Message === 'string'
        ? text.Message
        : undefined;
  return withContextLengthCode(
    new ProviderError({
      status: bedrockStatusForException(name),
      provider,
      message: message ?? `${provider} stream failed with ${name}`,
      code: name,
    }),
  );
}

/**
 * The failure an event-stream message reports, or undefined for an event: an `exception` message (a modelled
 * exception, named by `:exception-type`, its message in the payload) or an `error` message (the service's
 * own, named by `:error-code`, its message in `:error-message`).
 */
export function bedrockEventFailure(
  provider: string,
  event: { headers: Record<string, string>; payload: unknown },
): ProviderError | undefined {
  const type = event.headers[':message-type'];
  if (type === 'exception') {
    return bedrockStreamException(
      provider,
      event.headers[':exception-type'] ?? 'InternalServerException',
      event.payload,
    );
  }
  if (type !== 'error') return undefined;
  const code = event.headers[':error-code'] ?? 'InternalServerException';
  return new ProviderError({
    status: 500,
    provider,
    message: event.headers[':error-message'] ?? `${provider} stream error ${code}`,
    code,
  });
}
