/**
 * OpenAI's Responses API natively (`POST /v1/responses`), for the providers that host it (OpenAI, Azure
 * OpenAI). The request is the gateway's rebuilt one (the whole conversation in `input`, `store: false`:
 * gateway/responses/), sent as it is; the JSON answer (the provider's Response object) and the stream's
 * events are relayed as they came, while the relay notes the usage for the log and tells the pipeline when
 * the answer is complete (`response.completed`, `response.incomplete`) or failed (`response.failed`, an
 * `error` event). The Responses ingress gives them the gateway's ids and numbering.
 */
import { FailedResponseError, ProviderError } from '../../core/errors.js';
import type { Usage } from '../../core/openai-types.js';
import type { ResponsesStreamEvent } from '../../core/responses-types.js';
import type { OperationHandler, StreamOutput, StreamTranslator, UpstreamEvent } from '../types.js';
import { openAIStreamError } from './openai-error.js';

/** The usage of a Response object, in the Responses shape. */
interface ResponsesUsage {
  input_tokens?: number;
  input_tokens_details?: { cached_tokens?: number } | null;
  output_tokens?: number;
  output_tokens_details?: { reasoning_tokens?: number } | null;
  total_tokens?: number;
}

interface UpstreamResponseObject {
  object?: unknown;
  status?: unknown;
  model?: unknown;
  usage?: ResponsesUsage | null;
  output?: unknown;
  service_tier?: unknown;
  error?: { code?: unknown; message?: unknown } | null;
}

/** A Response's usage in the OpenAI chat shape, for the log, cost and rate limits; its `web_search_call`
 * items, the web-search tool calls OpenAI bills per call, as `server_tool_use.web_search_requests`. */
export function responsesUsage(body: unknown): Usage | undefined {
  const response = body as UpstreamResponseObject | null;
  const usage = response?.usage;
  if (!usage || typeof usage !== 'object') return undefined;
  const prompt = usage.input_tokens ?? 0;
  const completion = usage.output_tokens ?? 0;
  const searches = Array.isArray(response.output)
    ? response.output.filter((item) => (item as { type?: unknown } | null)?.type === 'web_search_call').length
    : 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage.total_tokens ?? prompt + completion,
    prompt_tokens_details: { cached_tokens: usage.input_tokens_details?.cached_tokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: usage.output_tokens_details?.reasoning_tokens ?? 0 },
    ...(searches > 0 && { server_tool_use: { web_search_requests: searches } }),
  };
}

/** A Response the provider reports as failed (in a 200 answer, or a `response.failed` event). */
function failedResponseError(
  provider: string,
  response: UpstreamResponseObject | undefined,
): FailedResponseError {
  const error = response?.error;
  const code = typeof error?.code === 'string' ? error.code : null;
  return new FailedResponseError({
    status: code === 'rate_limit_exceeded' ? 429 : 500,
    provider,
    code,
    message:
      typeof error?.message === 'string' ? error.message : `${provider} reported the response as failed`,
  });
}

/**
 * The failure one event of a Responses stream reports: an `error` event (named so, or of that `type`),
 * or `response.failed` with its Response's error. Undefined for any other event.
 */
export function responsesStreamError(
  provider: string,
  eventName: string | undefined,
  object: Record<string, unknown>,
): ProviderError | undefined {
  const type = typeof object.type === 'string' ? object.type : (eventName ?? '');
  if (type === 'error' || eventName === 'error') {
    const payload = object.error !== undefined ? object : { error: object };
    return openAIStreamError(provider, payload);
  }
  if (type === 'response.failed') {
    return failedResponseError(provider, object.response as UpstreamResponseObject | undefined);
  }
  return undefined;
}

/** Relays a native Responses stream event by event (see the module's comment). */
export class ResponsesEventRelay implements StreamTranslator {
  private lastUsage: Usage | undefined;
  private lastTier: string | undefined;
  private ended = false;

  constructor(private readonly provider: string) {}

  push(event: UpstreamEvent): StreamOutput[] {
    if (event.kind !== 'sse') return [{ type: 'malformed', detail: 'not a server-sent event' }];
    const text = event.data;
    if (text === '[DONE]' || text.length === 0) return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return [{ type: 'malformed', detail: `not JSON: ${text.slice(0, 200)}` }];
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return [{ type: 'malformed', detail: `not an object: ${text.slice(0, 200)}` }];
    }
    const object = parsed as Record<string, unknown>;
    const type = typeof object.type === 'string' ? object.type : (event.event ?? '');
    const failure = responsesStreamError(this.provider, event.event, object);
    if (failure && type !== 'response.failed') return [{ type: 'error', error: failure }];
    if (!type.startsWith('response.')) {
      return [{ type: 'malformed', detail: `not a Responses event: ${text.slice(0, 200)}` }];
    }
    const chunk = object as unknown as ResponsesStreamEvent;
    const response = object.response as UpstreamResponseObject | undefined;
    if (typeof response?.service_tier === 'string') this.lastTier = response.service_tier;
    if (failure) {
      this.lastUsage = responsesUsage(response) ?? this.lastUsage;
      return [{ type: 'error', error: failure }];
    }
    if (type === 'response.completed' || type === 'response.incomplete') {
      this.lastUsage = responsesUsage(response) ?? this.lastUsage;
      this.ended = true;
      return [{ type: 'chunk', chunk, raw: text }, { type: 'done' }];
    }
    return [{ type: 'chunk', chunk, raw: text }];
  }

  end(): StreamOutput[] {
    return [];
  }

  usage(): Usage | undefined {
    return this.lastUsage;
  }

  serviceTier(): string | undefined {
    return this.lastTier;
  }

  finished(): boolean {
    return this.ended;
  }
}

/** The Responses operation of an OpenAI-wire host; `buildRequest` says where and how it is called. */
export function openAIResponsesOperation(
  provider: string,
  buildRequest: OperationHandler<'responses'>['buildRequest'],
): OperationHandler<'responses'> {
  return {
    buildRequest,
    parseResponse(_req, res) {
      const body = res.body as UpstreamResponseObject | null;
      if (typeof body !== 'object' || body === null || body.object !== 'response') {
        throw new ProviderError({
          status: 502,
          provider,
          code: 'upstream_invalid_response',
          message: `${provider} answered /responses with something that is not a Response object`,
        });
      }
      if (body.status === 'failed') throw failedResponseError(provider, body);
      return body;
    },
    usageOf: responsesUsage,
    createStreamTranslator: () => new ResponsesEventRelay(provider),
  };
}
