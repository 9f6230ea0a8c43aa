/**
 * The HTTP surface. Hook order for /v1: onRequest reads the trace headers and echoes the trace id,
 * then authenticates the key and builds the RequestContext; routes validate their bodies and hand over
 * to the pipeline. Errors of any kind leave through one handler (error-handler.ts).
 */
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import {
  HEADERS,
  newSpanId,
  newTraceId,
  parseMetadata,
  readCacheDirectives,
  readTrace,
  headerValue,
  type RequestContext,
} from '../gateway/context.js';
import type { GatewayDeps } from '../gateway/deps.js';
import { sequentialId } from '../gateway/ids.js';
import { CallAbort } from '../core/abort.js';
import { GatewayError } from '../core/errors.js';
import { authenticate } from './auth.js';
import { assertBodyDepth } from '../core/body-depth.js';
import type { ApiKey } from '../store/types.js';
import { createErrorHandler } from './error-handler.js';
import { nulInUrl } from './nul-in-url.js';
import { registerMetricsRoute } from './routes/metrics.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerModelRoutes } from './routes/model.js';
import { registerMessagesRoutes } from './routes/messages.js';
import { registerPromptCompletionRoutes } from './routes/prompt-completions.js';
import { registerResponseRoutes } from './routes/responses.js';
import { BackgroundHub } from '../gateway/responses/background-hub.js';
import { NodeStop } from '../gateway/node-stop.js';
import { registerPassthroughRoutes } from './routes/passthrough.js';
import { registerFileRoutes } from './routes/files.js';
import { registerBatchRoutes } from './routes/batches.js';
import { registerFineTuningRoutes } from './routes/fine-tuning.js';
import { registerLogRoutes } from './routes/logs.js';
import { registerAnalyticsRoutes } from './routes/analytics.js';
import { registerOpenApiRoute } from './routes/openapi.js';
import { registerManagementRoutes } from './routes/management/index.js';
import { registerConsoleRoutes } from './routes/console.js';
import { traceparentOf } from '../observability/tracing.js';
import type { RequestIdHeader } from './http-sink.js';

declare module 'fastify' {
  interface FastifyRequest {
    gw: RequestContext;
    /** The text a JSON body was parsed from (a log record stores it rather than serialising the body again). */
    bodyText: string | null;
    /** The header the route's SDK reads an answer's request id from (requestIdHeaderOf). */
    requestIdHeader: RequestIdHeader;
  }
}

/**
 * Requests Node's HTTP parser refuses (malformed request line, lying Content-Length, headers too large)
 * never reach a route; they are answered here, in the same OpenAI error shape, and the socket closed.
 */
function writeClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const body = JSON.stringify(
    new GatewayError(
      tooLarge ? 'payload_too_large' : 'invalid_body',
      tooLarge ? 'The request headers are too large' : 'The request is not valid HTTP',
    ).toBody(),
  );
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      'content-type: application/json\r\n' +
      'x-gateway-error-source: gateway\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      'connection: close\r\n\r\n' +
      body,
  );
}

type Trace = ReturnType<typeof readTrace>;

/**
 * The request's metadata with its API key's over it, as Portkey merges them: the key's pairs (a team, a
 * cost centre) are what its calls are recorded, limited and routed by, whatever the client sends.
 */
function withKeyMetadata(given: Record<string, string>, apiKey: ApiKey): Record<string, string> {
  const own = apiKey.metadata;
  // Most keys carry none: the request's object as it is.
  for (const _ in own) return { ...given, ...own };
  return given;
}

/**
 * Gives an authenticated request its RequestContext (`request.gw`); an error when a header is malformed.
 */
function admit(
  request: FastifyRequest,
  reply: FastifyReply,
  trace: Trace,
  apiKey: ApiKey,
): Error | undefined {
  let metadata: Record<string, string>;
  let cache: ReturnType<typeof readCacheDirectives>;
  try {
    metadata = withKeyMetadata(parseMetadata(headerValue(request.headers, HEADERS.metadata)), apiKey);
    cache = readCacheDirectives(request.headers);
  } catch (err) {
    return err as Error;
  }
  const clientGone = new CallAbort();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) clientGone.abort();
  });
  request.gw = {
    requestId: request.id,
    traceId: trace.traceId,
    spanId: trace.spanId,
    parentSpanId: trace.parentSpanId,
    spanName: trace.spanName,
    cacheNamespace: cache.cacheNamespace,
    cacheForceRefresh: cache.cacheForceRefresh,
    metadata,
    apiKey,
    headers: request.headers,
    startedAtMs: Date.now(),
    startedAt: performance.now(),
    signal: clientGone,
  };
  return undefined;
}

/** Paths under /v1 that need no API key. */
const PUBLIC_PATHS = new Set(['/v1/openapi.json']);

/** The header the SDK of the API family a path belongs to reads an answer's request id from: Anthropic's
 * under /v1/messages (count_tokens, and its batches through the pass-through), OpenAI's on every other
 * path. The one place it is chosen: every answer's headers go by it (request.requestIdHeader). */
function requestIdHeaderOf(url: string): RequestIdHeader {
  const path = url.split('?')[0];
  return path === '/v1/messages' || path.startsWith('/v1/messages/') ? 'request-id' : 'x-request-id';
}

/** The path a request's API family is read from: its route's, or the request's own (without its query)
 * under the pass-through's wildcard route, which takes every API family's paths. */
function routePathOf(request: FastifyRequest): string {
  const route = request.routeOptions.url;
  return route === undefined || route.endsWith('*') ? request.url : route;
}

/**
 * Whether an answer to `url` (the request's, query included) goes out with `cache-control: no-store`:
 * every one under /v1 but the public paths. For the answers given before the /v1 hook ran (the router's
 * refusals, a stopping node's).
 */
function noStorePath(url: string): boolean {
  return underV1(url) && !PUBLIC_PATHS.has(url.split('?', 1)[0] ?? '');
}

/** Whether `url` (the request's, query included) is /v1 or under it. */
function underV1(url: string): boolean {
  const path = url.split('?', 1)[0] ?? '';
  return path === '/v1' || path.startsWith('/v1/');
}

/**
 * The trace headers every /v1 answer carries: the trace id, the request id under the header the route's SDK
 * reads (until a provider's replaces it, http-sink.ts), and the `traceparent` of the request's span.
 */
function setTraceHeaders(
  reply: FastifyReply,
  trace: Pick<Trace, 'traceId' | 'spanId'>,
  requestIdHeader: RequestIdHeader,
): void {
  reply.header(HEADERS.traceId, trace.traceId);
  reply.header(requestIdHeader, trace.traceId);
  reply.header('traceparent', traceparentOf(trace.traceId, trace.spanId));
}

/** A trace of its own, for a request whose trace headers could not be read. */
function newTrace(): Pick<Trace, 'traceId' | 'spanId'> {
  return { traceId: newTraceId(), spanId: newSpanId() };
}

/**
 * The headers of a refusal made before the /v1 hook sets them (the router's own errors, a request no route
 * takes, a stopping node's): the trace headers (the client's trace, or a new one when it sent none or a
 * malformed one) with the request id under the header `path`'s SDK reads, and `no-store` under /v1.
 */
function setRefusalHeaders(request: FastifyRequest, reply: FastifyReply, path: string): void {
  let trace: Pick<Trace, 'traceId' | 'spanId'>;
  try {
    trace = readTrace(request.headers);
  } catch {
    trace = newTrace();
  }
  setTraceHeaders(reply, trace, requestIdHeaderOf(path));
  if (noStorePath(request.url)) reply.header('cache-control', 'no-store');
}

/** What the HTTP surface tells the rest of the node. */
export interface AppHooks {
  /** A batch was created or cancelled: the node's batch worker looks at once instead of at its next poll. */
  batchesChanged?: () => void;
  /** The node's background responses (its worker's, when it runs one): a follower hears of new events and
   * a cancel reaches the call at once on this node. */
  backgroundResponses?: BackgroundHub;
  /** The node's stop: what it cuts, and waits for to give back what it holds (a file upload's claim). */
  stop?: NodeStop;
}

export async function buildApp(deps: GatewayDeps, hooks: AppHooks = {}): Promise<FastifyInstance> {
  const handleError = createErrorHandler(deps.logger);
  const app = Fastify({
    bodyLimit: deps.settings.bodyLimitBytes,
    // Time to receive a whole request (not to answer it): a client trickling a body cannot hold a
    // connection forever.
    requestTimeout: 120_000,
    clientErrorHandler: writeClientError,
    // Refused by the gateway's own hook below, in the OpenAI error shape: Fastify's 503 has a body of its own.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    genReqId: sequentialId,
    // Fastify's default (100) sent a longer id past its route into the pass-through; a path is bounded by
    // Node's header limit anyway, and every route looks up or refuses what it is given.
    routerOptions: { maxParamLength: 16_384 },
    // Errors the router meets before any hook runs (a path that is not percent-encoded UTF-8): the same
    // OpenAI error object and headers as every other error, not Fastify's own body.
    frameworkErrors: (error, request, reply) => {
      // No route was matched: the path says which API family the client speaks.
      setRefusalHeaders(request, reply, request.url);
      handleError(error, request, reply);
    },
  });
  app.decorateRequest('gw', null as unknown as RequestContext);
  app.decorateRequest('bodyText', null);
  app.decorateRequest('requestIdHeader', 'x-request-id');
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => {
    // No route under /v1 took it (a method none answers): the /v1 hook, which sets the trace headers, did
    // not run.
    if (underV1(request.url)) setRefusalHeaders(request, reply, request.url);
    const error = new GatewayError(
      'not_found',
      `No route for ${request.method} ${request.url.split('?')[0]}`,
    );
    void reply.code(404).header('x-gateway-error-source', 'gateway').send(error.toBody());
  });

  const stop = hooks.stop ?? new NodeStop();
  // A request that reaches a stopping node (on a connection still open: a new one is refused) never ran:
  // the client may send it again at once, to another node. /health answers it too, so that a load
  // balancer's check on such a connection sees the node as not ready. Fastify adds Connection: close.
  app.addHook('onRequest', (request, reply, done) => {
    if (!stop.stopping) {
      done();
      return;
    }
    // Set here: the /v1 hook that sets them on every other answer does not run after a refusal.
    setRefusalHeaders(request, reply, routePathOf(request));
    done(
      new GatewayError('shutting_down', 'The gateway is stopping: send the request again', {
        headers: { 'retry-after': '1' },
      }),
    );
  });

  await registerHealthRoutes(app);
  await registerMetricsRoute(app, deps);
  await registerConsoleRoutes(app);

  await app.register(
    async (v1) => {
      // Model and management bodies are JSON only; text/plain would otherwise be parsed as a string.
      v1.removeContentTypeParser('text/plain');
      // Fastify's own JSON parser (its limits, its refusals of prototype poisoning, its errors), with the
      // text kept on the request. An empty body is no body, as if the header were absent: the openai SDKs
      // send `Content-Type: application/json` with no body on operations that take none (cancelling a
      // batch, deleting a file); a route that needs a body refuses its absence with a 400 naming it.
      // Every body's depth is checked here, once, before any route walks it recursively.
      const parseJson = v1.getDefaultJsonParser('error', 'error');
      v1.removeContentTypeParser('application/json');
      v1.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
        if (text === '') {
          done(null, undefined);
          return;
        }
        request.bodyText = text as string;
        parseJson(request, text as string, (err, body: unknown) => {
          if (err) {
            done(err);
            return;
          }
          try {
            assertBodyDepth(body);
          } catch (depthError) {
            done(depthError as Error);
            return;
          }
          done(null, body);
        });
      });
      // A callback hook, not an async one: a key found in the lookup cache (nearly every request's) admits
      // the request without a promise or a turn of the microtask queue.
      v1.addHook('onRequest', (request, reply, done) => {
        const isPublic = PUBLIC_PATHS.has(request.routeOptions.url ?? '');
        // Answers behind a key hold log bodies, prompts, a new key's secret: no cache on the way may keep
        // them. Every answer's headers start from the reply's (streams, relays and refusals of the trace
        // headers too), so one header here, first.
        if (!isPublic) reply.header('cache-control', 'no-store');
        let trace: Trace;
        const requestIdHeader = requestIdHeaderOf(routePathOf(request));
        request.requestIdHeader = requestIdHeader;
        try {
          trace = readTrace(request.headers);
        } catch (err) {
          // A malformed trace header is refused; the refusal still carries the headers of a (new) trace.
          setTraceHeaders(reply, newTrace(), requestIdHeader);
          done(err as Error);
          return;
        }
        setTraceHeaders(reply, trace, requestIdHeader);
        const refused = nulInUrl(request);
        if (refused) {
          done(refused);
          return;
        }
        if (isPublic) {
          done();
          return;
        }
        let apiKey: ApiKey | Promise<ApiKey>;
        try {
          apiKey = authenticate(request.headers, deps.lookups);
        } catch (err) {
          done(err as Error);
          return;
        }
        if (apiKey instanceof Promise) {
          apiKey.then((key) => done(admit(request, reply, trace, key)), done);
        } else {
          // Outside any try: done() runs the route, whose errors are Fastify's to handle.
          done(admit(request, reply, trace, apiKey));
        }
      });
      await registerOpenApiRoute(v1);
      await registerModelRoutes(v1, deps);
      await registerMessagesRoutes(v1, deps);
      await registerPromptCompletionRoutes(v1, deps);
      await registerResponseRoutes(v1, deps, hooks.backgroundResponses ?? new BackgroundHub());
      await registerLogRoutes(v1, deps);
      await registerAnalyticsRoutes(v1, deps);
      await registerManagementRoutes(v1, deps);
      await registerFileRoutes(v1, deps);
      await registerBatchRoutes(v1, deps, hooks.batchesChanged ?? (() => undefined));
      await registerFineTuningRoutes(v1, deps, stop);
      await registerPassthroughRoutes(v1, deps);
    },
    { prefix: '/v1' },
  );

  return app;
}
