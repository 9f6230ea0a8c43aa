// OpenAI's error bodies as the real API sends them, so retry and fallback logic is tested on real shapes.
import type { FakeBehaviour } from './types.js';

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

function errorBody(
  message: string,
  type: string,
  param: string | null,
  code: string | null,
): OpenAIErrorBody {
  return { error: { message, type, param, code } };
}

export const openAIErrors = {
  rateLimited: (retryAfterSeconds = 2) =>
    errorBody(
      `Rate limit reached for gpt-4o-mini in organization org-fake on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in ${retryAfterSeconds}s. Visit https://platform.openai.com/account/rate-limits to learn more.`,
      'requests',
      null,
      'rate_limit_exceeded',
    ),
  insufficientQuota: () =>
    errorBody(
      'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
      'insufficient_quota',
      null,
      'insufficient_quota',
    ),
  serverError: () =>
    errorBody(
      'The server had an error while processing your request. Sorry about that!',
      'server_error',
      null,
      null,
    ),
  overloaded: () =>
    errorBody('The engine is currently overloaded, please try again later.', 'server_error', null, null),
  badGateway: () => errorBody('Bad gateway.', 'server_error', null, null),
  contextLengthExceeded: () =>
    errorBody(
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.",
      'invalid_request_error',
      'messages',
      'context_length_exceeded',
    ),
  contentPolicy: () =>
    errorBody(
      'Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.',
      'invalid_request_error',
      null,
      'content_policy_violation',
    ),
  invalidApiKey: () =>
    errorBody(
      'Incorrect API key provided: sk-fake. You can find your API key at https://platform.openai.com/account/api-keys.',
      'invalid_request_error',
      null,
      'invalid_api_key',
    ),
  modelNotFound: (model: string) =>
    errorBody(
      `The model \`${model}\` does not exist or you do not have access to it.`,
      'invalid_request_error',
      null,
      'model_not_found',
    ),
  streamInterrupted: () =>
    errorBody(
      'The server had an error while processing your request. Sorry about that!',
      'server_error',
      null,
      'stream_error',
    ),
};

/** A plausible body for a bare status, used when a behaviour gives a status but no body. */
export function errorBodyForStatus(status: number): OpenAIErrorBody {
  switch (status) {
    case 400:
      return errorBody('Invalid request.', 'invalid_request_error', null, null);
    case 401:
      return openAIErrors.invalidApiKey();
    case 403:
      return errorBody('You are not allowed to sample from this model', 'invalid_request_error', null, null);
    case 404:
      return errorBody('Not found.', 'invalid_request_error', null, null);
    case 429:
      return openAIErrors.rateLimited();
    case 502:
      return openAIErrors.badGateway();
    case 503:
      return openAIErrors.overloaded();
    default:
      return status >= 500
        ? openAIErrors.serverError()
        : errorBody(`Request failed with status ${status}.`, 'invalid_request_error', null, null);
  }
}

/** Ready-made behaviours for the common upstream failures. */
export const faults = {
  rateLimited: (retryAfterSeconds = 2): FakeBehaviour => ({
    status: 429,
    body: openAIErrors.rateLimited(retryAfterSeconds),
    headers: { 'retry-after': String(retryAfterSeconds), 'retry-after-ms': String(retryAfterSeconds * 1000) },
  }),
  serverError: (): FakeBehaviour => ({ status: 500, body: openAIErrors.serverError() }),
  overloaded: (): FakeBehaviour => ({ status: 503, body: openAIErrors.overloaded() }),
  contextLengthExceeded: (): FakeBehaviour => ({ status: 400, body: openAIErrors.contextLengthExceeded() }),
  contentPolicy: (): FakeBehaviour => ({ status: 400, body: openAIErrors.contentPolicy() }),
  textError: (
    status = 502,
    text = 'upstream connect error or disconnect/reset before headers',
  ): FakeBehaviour => ({
    status,
    body: text,
    headers: { 'content-type': 'text/plain; charset=utf-8' },
  }),
};
