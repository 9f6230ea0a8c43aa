/**
 * The pass-through: any other path under /v1, with POST, GET, PUT or DELETE, goes to the selected
 * provider with the provider's own body, and the provider's answer comes back unchanged — status, body
 * bytes (binary and streamed included) and its headers less the hop-by-hop ones. Recorded like any call.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import { performance } from 'node:perf_hooks';
import type { GatewayDeps } from '../../gateway/deps.js';
import { GatewayError, ProviderError } from '../../core/errors.js';
import { bodyForLog, buildLogRecord } from '../../gateway/log-record.js';
import { bearerToken, resolveRequestConfig } from '../../gateway/request-config.js';
import { resolveTarget } from '../../gateway/resolve-target.js';
import { inheritFrom } from '../../gateway/routing/inherit.js';
import type { TargetConfig } from '../../gateway/config/index.js';
import type { AuthMaterial, UpstreamRequest } from '../../providers/types.js';
import { scrubSecrets, targetSecrets } from '../../gateway/scrub-secrets.js';
import { flattenHeaders } from '../../gateway/upstream.js';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

/** Client headers that may travel to the provider: not hop-by-hop, not the gateway's, not credentials. */
function requestHeadersToForward(headers: FastifyRequest['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (
      value === undefined ||
      HOP_BY_HOP.has(name) ||
      name.startsWith('x-gateway-') ||
      name === 'authorization'
    ) {
      continue;
    }
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function responseHeadersToReturn(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    // The gateway's own headers (trace id, provider…) are never the provider's to set.
    if ((name !== 'content-length' && HOP_BY_HOP.has(name)) || name.startsWith('x-gateway-')) continue;
    out[name] = value;
  }
  return out;
}

/** Sends the request to the provider the headers/config select, answering with its response as it is. */
export async function proxyToProvider(
  deps: GatewayDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  path: string,
): Promise<FastifyReply> {
  const ctx = request.gw;
  const started = performance.now();
  const config = await resolveRequestConfig(ctx.headers, ctx.apiKey.workspace_id, deps.lookups);
  const targets = config.targets as TargetConfig[] | undefined;
  const node = targets && targets.length > 0 ? inheritFrom(config, targets[0]) : config;
  const targetPath = node === config ? '' : 'targets[0]';
  const resolved = await resolveTarget(
    node,
    targetPath,
    ctx.apiKey.workspace_id,
    bearerToken(ctx.headers),
    deps.lookups,
    deps.settings.customHostPolicy,
  );
  const body = Buffer.isBuffer(request.body) ? request.body : undefined;
  const controller = new AbortController();
  ctx.signal.addEventListener('abort', () => controller.abort(), { once: true });
  if (ctx.signal.aborted) controller.abort();
  const timeoutMs =
    typeof node.request_timeout === 'number' ? node.request_timeout : deps.settings.defaultRequestTimeoutMs;
  const timer = setTimeout(() => controller.abort(), timeoutMs);

  let status = 0;
  let ttfbMs: number | null = null;
  const record = (errorCode: string | null, errorMessage: string | null): void => {
    const contentType = String(request.headers['content-type'] ?? '');
    deps.logWriter.enqueue(
      buildLogRecord(ctx, {
        endpoint: 'passthrough',
        method: request.method,
        path: request.url.split('?')[0],
        status,
        provider: resolved.adapter.id,
        model: null,
        target: targetPath,
        stream: false,
        isAttempt: false,
        ttfbMs,
        usage: undefined,
        cacheStatus: null,
        retryCount: 0,
        errorCode,
        errorMessage,
        requestBody:
          body && contentType.includes('json')
            ? bodyForLog(safeJson(body), {
                enabled: deps.settings.logBodies,
                maxBytes: deps.settings.logBodyMaxBytes,
              })
            : null,
        responseBody: null,
      }),
    );
  };

  let response: Dispatcher.ResponseData;
  let auth: AuthMaterial | undefined;
  try {
    auth = resolved.adapter.authenticate
      ? await resolved.adapter.authenticate(resolved.target, controller.signal)
      : undefined;
    const upstreamRequest: UpstreamRequest = await resolved.adapter.buildPassthrough({
      method: request.method as UpstreamRequest['method'],
      path,
      headers: requestHeadersToForward(request.headers),
      body,
      target: resolved.target,
      auth,
    });
    try {
      response = await deps.upstream.send(upstreamRequest, controller.signal);
    } catch (err) {
      if (err instanceof GatewayError || err instanceof ProviderError) throw err;
      if (controller.signal.aborted && !ctx.signal.aborted) {
        throw new GatewayError(
          'request_timeout',
          `${resolved.adapter.id} did not answer within ${timeoutMs} ms`,
        );
      }
      throw new GatewayError(
        'upstream_unreachable',
        `Could not reach ${resolved.adapter.id}: ${(err as Error).message}`,
      );
    }
  } catch (err) {
    clearTimeout(timer);
    const mapped =
      err instanceof GatewayError || err instanceof ProviderError
        ? scrubSecrets(err, targetSecrets(resolved.target, auth))
        : undefined;
    status = ctx.signal.aborted ? 499 : (mapped?.status ?? 500);
    record(mapped ? String(mapped.code ?? mapped.type) : 'internal_error', mapped?.message ?? String(err));
    throw err;
  }
  clearTimeout(timer);
  ttfbMs = performance.now() - started;
  status = response.statusCode;
  // The record is written when the relay ends, so latency covers the whole body and a relay cut short
  // is recorded as such.
  if (reply.raw.destroyed) {
    // The client left while the provider was answering: nothing will be relayed.
    response.body.destroy();
    status = 499;
    record('client_gone', 'The client went away before the answer was relayed');
    reply.hijack();
    return reply;
  }
  reply.raw.once('close', () => {
    if (reply.raw.writableFinished) record(null, null);
    else record('relay_interrupted', 'The response was cut before the whole body was relayed');
  });
  reply.header('x-gateway-provider', resolved.adapter.id);
  reply.headers(responseHeadersToReturn(flattenHeaders(response.headers)));
  reply.code(status);
  return reply.send(response.body);
}

function safeJson(buffer: Buffer): unknown {
  try {
    return JSON.parse(buffer.toString('utf8'));
  } catch {
    return { bytes: buffer.length };
  }
}

export async function registerPassthroughRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.route({
      method: ['GET', 'POST', 'PUT', 'DELETE'],
      url: '/*',
      handler: (request, reply) => proxyToProvider(deps, request, reply, request.url.slice('/v1'.length)),
    });
  });
}
