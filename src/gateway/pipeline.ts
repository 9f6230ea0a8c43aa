/**
 * The one pipeline every model call goes through: resolve the config, route to targets, answer the
 * client (JSON or a stream) and record the call. Endpoint differences are data (`EndpointKind`).
 */
import type { FastifyReply } from 'fastify';
import type { EndpointKind } from '../providers/types.js';
import type { GatewayConfig } from './config/index.js';
import { forwardableHeaders, type AttemptOutcome } from './attempt.js';
import { ClientStream } from './client-stream.js';
import { HEADERS, headerValue, type RequestContext } from './context.js';
import type { GatewayDeps } from './deps.js';
import { ERROR_SOURCE_HEADER, GatewayError, ProviderError } from '../core/errors.js';
import { bodyForLog, buildLogRecord, skippedChunksError } from './log-record.js';
import { resolveRequestConfig } from './request-config.js';
import { route, type RouteResult, type RouteState } from './router.js';

export interface ModelCall {
  endpoint: EndpointKind;
  /** The validated body. */
  body: Record<string, unknown>;
  ctx: RequestContext;
  reply: FastifyReply;
}

/** strict_compat_compliance: the config's value, else the header, else true (only standard fields). */
function strictCompatOf(config: GatewayConfig, ctx: RequestContext): boolean {
  if (typeof config.strict_compat_compliance === 'boolean') return config.strict_compat_compliance;
  const header = headerValue(ctx.headers, HEADERS.strictCompat);
  if (header === 'false') return false;
  return true;
}

export function routeHeaders(state: RouteState): Record<string, string> {
  const headers: Record<string, string> = { [HEADERS.retryAttemptCount]: String(state.retryCount) };
  if (state.provider) headers[HEADERS.answeringProvider] = state.provider;
  if (state.targetPath !== null) headers[HEADERS.lastUsedOptionIndex] = state.targetPath;
  if (state.cacheStatus) headers[HEADERS.cacheStatus] = state.cacheStatus;
  return headers;
}

/** The record's error columns: the error, or on an answer how many malformed stream chunks were skipped. */
function errorFields(
  outcome: AttemptOutcome | undefined,
  error: GatewayError | ProviderError | undefined,
): { errorCode: string | null; errorMessage: string | null } {
  if (error) return { errorCode: String(error.code ?? error.type), errorMessage: error.message };
  if (outcome?.ok && outcome.malformedChunks > 0) return skippedChunksError(outcome.malformedChunks);
  return { errorCode: null, errorMessage: null };
}

export async function handleModelCall(deps: GatewayDeps, call: ModelCall): Promise<void> {
  const { ctx, reply, endpoint, body } = call;
  const stream = endpoint !== 'embeddings' && body.stream === true;
  const state: RouteState = { targetPath: null, provider: null, retryCount: 0, cacheStatus: null };
  let result: RouteResult | undefined;
  let failure: unknown;
  let client: ClientStream | undefined;

  try {
    const config = await resolveRequestConfig(ctx.headers, ctx.apiKey.workspace_id, deps.lookups);
    const strictCompat = strictCompatOf(config, ctx);
    if (body.thinking !== undefined && strictCompat) {
      throw new GatewayError(
        'unsupported_parameter',
        'thinking needs strict_compat_compliance set to false (in the config, or the ' +
          `${HEADERS.strictCompat} header)`,
        { param: 'thinking' },
      );
    }
    const streamOptions = body.stream_options as { include_usage?: boolean } | undefined;
    const clientWantsUsage = streamOptions?.include_usage === true;
    // Usage is always asked of the provider so every streamed call is recorded with its tokens; the
    // usage chunk reaches the client only when it asked for it.
    const upstreamBody = stream
      ? { ...body, stream_options: { ...streamOptions, include_usage: true } }
      : body;
    if (stream) {
      client = new ClientStream(reply.raw, () => {
        reply.hijack();
        return { ...(reply.getHeaders() as Record<string, string>), ...routeHeaders(state) };
      });
    }
    result = await route(deps, {
      ctx,
      endpoint,
      body: upstreamBody,
      stream,
      client,
      clientWantsUsage,
      config,
      strictCompat,
      state,
      url: reply.request.url,
    });
  } catch (err) {
    failure = err;
  }

  const outcome: AttemptOutcome | undefined = result?.outcome;
  let status: number;
  let responseBody: unknown;
  let error: GatewayError | ProviderError | undefined;

  if (outcome?.ok) {
    status = outcome.status;
    if (client) {
      client.finish();
      responseBody = { choices: [...client.text].map(([index, content]) => ({ index, content })) };
    } else {
      responseBody = outcome.body;
      reply.headers(routeHeaders(state)).headers(forwardableHeaders(outcome.upstreamHeaders));
      reply.code(status).type('application/json');
      void reply.send(outcome.rawText ?? JSON.stringify(outcome.body));
    }
  } else {
    error =
      outcome?.error ??
      (failure instanceof GatewayError || failure instanceof ProviderError
        ? failure
        : new GatewayError('internal_error', 'The gateway failed to handle the request', { cause: failure }));
    if (!(failure instanceof GatewayError || failure instanceof ProviderError) && failure !== undefined) {
      deps.logger.error({ err: failure, traceId: ctx.traceId }, 'model call failed');
    }
    status = outcome?.reason === 'client_gone' || ctx.signal.aborted ? 499 : error.status;
    responseBody = error.toBody();
    if (client?.started) {
      client.fail(error.toBody());
    } else if (status !== 499) {
      const source = error instanceof ProviderError ? 'provider' : 'gateway';
      reply.headers(routeHeaders(state)).header(ERROR_SOURCE_HEADER, source);
      if (error instanceof ProviderError) {
        reply.headers(forwardableHeaders(error.headers));
        if (error.retryAfterMs !== undefined)
          reply.header('retry-after', String(Math.ceil(error.retryAfterMs / 1000)));
      } else {
        reply.headers(error.headers);
      }
      void reply.code(error.status).type('application/json').send(JSON.stringify(error.toBody()));
    } else if (!reply.sent) {
      reply.hijack();
      reply.raw.destroy();
    }
  }

  const bodies = { enabled: deps.settings.logBodies, maxBytes: deps.settings.logBodyMaxBytes };
  deps.logWriter.enqueue(
    buildLogRecord(ctx, {
      endpoint,
      method: 'POST',
      path: reply.request.url.split('?')[0],
      status,
      provider: state.provider,
      model: outcome?.ok ? (outcome.model ?? (body.model as string)) : ((body.model as string) ?? null),
      target: state.targetPath,
      stream,
      isAttempt: false,
      ttfbMs: outcome?.ttfbMs ?? null,
      usage: outcome?.usage,
      cacheStatus: state.cacheStatus,
      retryCount: state.retryCount,
      ...errorFields(outcome, error),
      requestBody: bodyForLog(result?.requestBody ?? body, bodies),
      responseBody: bodyForLog(responseBody, bodies, outcome?.ok ? outcome.rawText : undefined),
    }),
  );
}
