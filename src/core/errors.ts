/**
 * The one error type of the gateway. Every failure the gateway itself produces is a GatewayError
 * with a stable code; it is turned into the OpenAI error object in exactly one place
 * (`toErrorBody`) and into an HTTP response by the server's error handler.
 */

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'api_error'
  /** A rate-limit policy of the gateway refused the call (answered as OpenAI answers it: rate-limit-error.ts). */
  | 'rate_limit_exceeded'
  /** A hook with `deny` failed: the call was refused before, or its answer withheld after, the provider. */
  | 'hooks_failed';

/** Stable codes: the status and type of each are fixed here and nowhere else. */
export const ERROR_CODES = {
  invalid_json: { status: 400, type: 'invalid_request_error' },
  invalid_body: { status: 400, type: 'invalid_request_error' },
  invalid_header: { status: 400, type: 'invalid_request_error' },
  invalid_query: { status: 400, type: 'invalid_request_error' },
  invalid_path: { status: 400, type: 'invalid_request_error' },
  invalid_config: { status: 400, type: 'invalid_request_error' },
  unknown_provider: { status: 400, type: 'invalid_request_error' },
  missing_provider: { status: 400, type: 'invalid_request_error' },
  custom_host_refused: { status: 400, type: 'invalid_request_error' },
  unsupported_parameter: { status: 400, type: 'invalid_request_error' },
  /** A function tool that asks for strict mode with a schema strict mode cannot take (OpenAI's code). */
  invalid_function_parameters: { status: 400, type: 'invalid_request_error' },
  /** A strict json_schema response format whose schema strict mode cannot take (OpenAI's Responses code). */
  invalid_json_schema: { status: 400, type: 'invalid_request_error' },
  unsupported_endpoint: { status: 400, type: 'invalid_request_error' },
  provider_config_error: { status: 400, type: 'invalid_request_error' },
  /** A prompt's template (or a partial it includes) that cannot be read or rendered. */
  invalid_prompt: { status: 400, type: 'invalid_request_error' },
  /** A prompt completion's `variables`: one missing, unknown or too large. */
  invalid_variables: { status: 400, type: 'invalid_request_error' },
  missing_api_key: { status: 401, type: 'authentication_error' },
  invalid_api_key: { status: 401, type: 'authentication_error' },
  /** A stored job's (a batch's, a background response's) API key revoked, deleted or expired since. */
  api_key_revoked: { status: 401, type: 'authentication_error' },
  forbidden: { status: 403, type: 'permission_error' },
  not_found: { status: 404, type: 'not_found_error' },
  virtual_key_not_found: { status: 404, type: 'not_found_error' },
  config_not_found: { status: 404, type: 'not_found_error' },
  prompt_not_found: { status: 404, type: 'not_found_error' },
  conflict: { status: 409, type: 'invalid_request_error' },
  request_timeout: { status: 408, type: 'timeout_error' },
  payload_too_large: { status: 413, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  rate_limited: { status: 429, type: 'rate_limit_error' },
  rate_limit_exceeded: { status: 429, type: 'rate_limit_exceeded' },
  // 446: the status the seed's users know for a request denied by its hooks.
  hooks_failed: { status: 446, type: 'hooks_failed' },
  internal_error: { status: 500, type: 'api_error' },
  upstream_unreachable: { status: 502, type: 'api_error' },
  upstream_invalid_response: { status: 502, type: 'api_error' },
  circuit_open: { status: 503, type: 'api_error' },
  shutting_down: { status: 503, type: 'api_error' },
  /** The shared rate counters cannot be reached and GATEWAY_RATE_LIMIT_FAIL_MODE is `closed`. */
  rate_limit_unavailable: { status: 503, type: 'api_error' },
} as const satisfies Record<string, { status: number; type: ErrorType }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export interface GatewayErrorOptions {
  param?: string | null;
  cause?: unknown;
  headers?: Record<string, string>;
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | null;
  /** Extra response headers, e.g. Retry-After on a 429. */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.type = ERROR_CODES[code].type;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/**
 * An error answered by a provider (or by the gateway on the provider's behalf when the provider's
 * answer could not be used). It keeps the provider's status; its body is normalised to the OpenAI
 * error object. Retry, fallback and the circuit breaker read `status` and `retryAfterMs`.
 */
export class ProviderError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  readonly provider: string;
  /** Milliseconds the provider asked us to wait (Retry-After, Retry-After-ms, or a body hint). */
  readonly retryAfterMs: number | undefined;
  /** Headers of the provider's response worth returning to the client. */
  readonly headers: Record<string, string>;

  constructor(init: {
    status: number;
    message: string;
    provider: string;
    type?: string | undefined;
    code?: string | null | undefined;
    param?: string | null | undefined;
    retryAfterMs?: number | undefined;
    headers?: Record<string, string> | undefined;
  }) {
    super(init.message);
    this.name = 'ProviderError';
    this.status = init.status;
    this.provider = init.provider;
    this.type = init.type ?? typeForStatus(init.status);
    this.code = init.code ?? null;
    this.param = init.param ?? null;
    this.retryAfterMs = init.retryAfterMs;
    this.headers = init.headers ?? {};
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** A Response the provider answered as failed (a `response.failed` event, a failed Response in a 200
 * answer): its failure is the Response's own, with no `error` event of the provider's to pass on. */
export class FailedResponseError extends ProviderError {}

export function typeForStatus(status: number): ErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 408) return 'timeout_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 400 && status < 500) return 'invalid_request_error';
  return 'api_error';
}

/** The response header that tells the gateway's own errors from the provider's. */
export const ERROR_SOURCE_HEADER = 'x-gateway-error-source';
