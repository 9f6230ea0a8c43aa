/**
 * The pass-through: any other path under /v1, with POST, GET, PUT, PATCH or DELETE, goes to the provider the
 * config selects with the provider's own body, streamed both ways, and the provider's answer comes back
 * unchanged — status, body bytes (binary and streamed included) and its headers less the hop-by-hop ones —
 * except that a failed answer never carries the target's credentials. Routing, retries, fallback and the
 * breaker apply as to any call (gateway/passthrough/), and every call is recorded. The gateway's own
 * paths never pass through.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { callContextFromRequest, type CallContext } from '../../gateway/call-context.js';
import type { GatewayDeps } from '../../gateway/deps.js';
import type { UpstreamRelay } from '../../gateway/attempt.js';
import { SET_COOKIE_SEPARATOR } from '../../gateway/upstream.js';
import { executePassthrough, type RelaySink } from '../../gateway/passthrough/execute-passthrough.js';
import { discardBody } from '../../gateway/passthrough/discard-body.js';
import { ReplayableBody } from '../../gateway/passthrough/replayable-body.js';
import type { RouteState } from '../../gateway/routing/route-types.js';
import type { UpstreamRequest } from '../../providers/types.js';
import { PROVIDER_KEY_HEADERS, takeQueryKey, withClientProviderKey } from '../client-provider-key.js';
import { HttpSink, routeHeaders } from '../http-sink.js';
import { openAICodec } from '../../ingress/openai-codec.js';
import { GatewayError } from '../../core/errors.js';
import { HOP_BY_HOP } from '../../core/hop-by-hop.js';

/** The headers a `Connection` header names: hop-by-hop for that one connection (RFC 9110 §7.6.1). */
function connectionOptions(connection: string | string[] | undefined): Set<string> {
  const value = Array.isArray(connection) ? connection.join(',') : (connection ?? '');
  return new Set(value.split(',').map((name) => name.trim().toLowerCase()));
}

/**
 * Client headers that may travel to the provider: not hop-by-hop, not the gateway's, not credentials
 * (`authorization` and the provider key headers are the client's key, which the target's adapter sends),
 * not `expect` (the client's `100-continue` is the gateway's to answer, and undici refuses to send one).
 * `accept-encoding` stays behind too: answers then come uncompressed, so that a failed answer can be read
 * and have credentials cut out of it (a compressed body would carry them past the scrub).
 */
function requestHeadersToForward(headers: FastifyRequest['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  const hops = connectionOptions(headers.connection);
  for (const [name, value] of Object.entries(headers)) {
    if (
      value === undefined ||
      hops.has(name) ||
      // The body is streamed as it came, so its length stays what the client said.
      (name !== 'content-length' && HOP_BY_HOP.has(name)) ||
      name.startsWith('x-gateway-') ||
      name === 'authorization' ||
      PROVIDER_KEY_HEADERS.includes(name as (typeof PROVIDER_KEY_HEADERS)[number]) ||
      name === 'accept-encoding' ||
      // Answered here (100 Continue) before the body was read; the provider's side is the gateway's.
      name === 'expect'
    ) {
      continue;
    }
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/**
 * Answer headers that set a policy for the answering origin as a whole: the provider's say where its own
 * host can be reached (Alt-Svc) or that its host and subdomains take HTTPS only for a year
 * (Strict-Transport-Security). Relayed, they would be read as the gateway's origin's.
 */
const ORIGIN_POLICIES = new Set(['alt-svc', 'strict-transport-security']);

function responseHeadersToReturn(
  headers: Record<string, string>,
  bodyChanged: boolean,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const hops = connectionOptions(headers.connection);
  for (const [name, value] of Object.entries(headers)) {
    // The gateway's own headers (trace id, provider…) are never the provider's to set.
    if (
      (name !== 'content-length' && (HOP_BY_HOP.has(name) || hops.has(name))) ||
      name.startsWith('x-gateway-') ||
      ORIGIN_POLICIES.has(name) ||
      // The answer is one key's own: the gateway's no-store stays, whatever the provider allows, and no
      // field a CDN in front reads before it (RFC 9213's CDN-Cache-Control and its targeted
      // `<cdn>-CDN-Cache-Control`, Surrogate-Control) lets one keep it.
      name === 'cache-control' ||
      name === 'surrogate-control' ||
      name === 'cdn-cache-control' ||
      name.endsWith('-cdn-cache-control')
    ) {
      continue;
    }
    if (bodyChanged && name === 'content-length') continue;
    // Each cookie its own header, as the provider set it.
    out[name] = name === 'set-cookie' ? value.split(SET_COOKIE_SEPARATOR) : value;
  }
  return out;
}

/** The client's connection for a relayed answer; errors of the gateway's own are the OpenAI error object. */
class HttpRelaySink implements RelaySink {
  constructor(private readonly reply: FastifyReply) {}

  relay(answer: UpstreamRelay, state: RouteState): Promise<boolean> {
    const { reply } = this;
    const res = reply.raw;
    if (res.destroyed) {
      // The client left while the provider was answering: nothing will be relayed.
      if (typeof answer.body !== 'string') discardBody(answer.body);
      reply.hijack();
      return Promise.resolve(false);
    }
    const whole = new Promise<boolean>((resolve) => res.once('close', () => resolve(res.writableFinished)));
    reply.headers(routeHeaders(state));
    reply.headers(responseHeadersToReturn(answer.headers, typeof answer.body === 'string'));
    // A gateway policy's limits are the ones the client meets: they replace the provider's of that name.
    if (state.rateLimitHeaders) reply.headers(state.rateLimitHeaders);
    reply.code(answer.status);
    // A scrubbed answer goes as bytes: sent as a string, Fastify would add a charset to its Content-Type.
    void reply.send(
      typeof answer.body === 'string' ? Buffer.from(answer.body, 'utf8') : Readable.from(answer.body),
    );
    return whole;
  }

  fail(error: Parameters<RelaySink['fail']>[0], status: number, state: RouteState): void {
    new HttpSink(this.reply, openAICodec, undefined, state).fail(error, status);
  }
}

/**
 * The first path segments under /v1 that are the gateway's own API (management, logs, analytics, its
 * OpenAPI document): a request there that no route of the gateway takes (another method, an extra
 * segment) is not the provider's to answer — it would reach the provider with the caller's credentials —
 * but a 404 of the gateway's, as any unknown path outside /v1.
 */
const GATEWAY_OWN_SEGMENTS = new Set([
  'logs',
  'analytics',
  'api-keys',
  'virtual-keys',
  'providers',
  'configs',
  'guardrails',
  'prompts',
  'policies',
  'cache',
  'workspaces',
  'openapi.json',
]);

function isGatewayOwnPath(url: string): boolean {
  const path = url.split('?')[0];
  const segment = path.slice('/v1/'.length).split('/')[0];
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    return false;
  }
  return GATEWAY_OWN_SEGMENTS.has(decoded);
}

/**
 * Whether the path has a `.` or `..` segment, as a URL parser reads it (`%2e` is a dot, `\` a slash):
 * resolved against the provider's base URL, it would leave the base's own path (`{base}/../other`), so
 * such a path is refused rather than sent anywhere.
 */
function hasDotSegment(url: string): boolean {
  const path = url.split('?')[0];
  return path.split(/[/\\]/).some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
}

/**
 * The body of a request whose method Fastify reads no body for (GET, HEAD) when it has one all the same
 * (a length, or chunks): the provider's own API may take it (a search sent as a GET), and a pass-through
 * sends what the client sent rather than drop it unseen.
 */
function unparsedBody(request: FastifyRequest): AsyncIterable<Uint8Array> | undefined {
  const { headers } = request;
  const length = Number(headers['content-length'] ?? 0);
  const hasBody = headers['transfer-encoding'] !== undefined || (Number.isFinite(length) && length > 0);
  return hasBody ? request.raw : undefined;
}

/** Sends the request to the provider the headers or config select, answering with its response as it is. */
export async function passThrough(
  deps: GatewayDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const sink = new HttpRelaySink(reply);
  const { path, key } = takeQueryKey(request.url.slice('/v1'.length));
  const how = { method: request.method, url: `/v1${path}` };
  const gw = withClientProviderKey(request.gw, PROVIDER_KEY_HEADERS, key);
  const ctx: CallContext = await callContextFromRequest(deps.lookups, gw, how);
  const stream = (request.body as AsyncIterable<Uint8Array> | undefined) ?? unparsedBody(request);
  await executePassthrough(
    deps,
    {
      ctx,
      passthrough: {
        method: request.method as UpstreamRequest['method'],
        path,
        headers: requestHeadersToForward(request.headers),
        body: stream ? new ReplayableBody(stream, deps.settings.bodyLimitBytes) : undefined,
      },
    },
    sink,
  );
  return reply;
}

export async function registerPassthroughRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // The body is not read here: it streams to the provider as it arrives.
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    scope.route({
      // PATCH too: providers' own APIs update with it (Gemini's and Vertex AI's cachedContents.patch).
      method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
      url: '/*',
      handler: (request, reply) => {
        if (isGatewayOwnPath(request.url)) {
          throw new GatewayError('not_found', `No route for ${request.method} ${request.url.split('?')[0]}`);
        }
        if (hasDotSegment(request.url)) {
          throw new GatewayError(
            'invalid_path',
            `The path ${request.url.split('?')[0]} has a '.' or '..' segment: a pass-through path must name the provider endpoint itself`,
          );
        }
        return passThrough(deps, request, reply);
      },
    });
  });
}
