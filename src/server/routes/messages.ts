/**
 * Anthropic's Messages API, an ingress of the one pipeline: `POST /v1/messages` and
 * `POST /v1/messages/count_tokens` validate Anthropic's request and run it through `execute` like every
 * model route — config routing, retries, fallbacks, breaker, cache, hooks, rate limits, the log. A target
 * with the API natively is called with the request as it is; any other gets it translated
 * (gateway/steps/messages-step.ts). Answers and errors, the gateway's own included (a bad body, a bad
 * gateway key), are in Anthropic's shapes (ingress/messages-codec.ts).
 *
 * Anthropic's clients send their key in `x-api-key`: here it is the client's provider key, as
 * `Authorization: Bearer` is on the OpenAI routes (used when the target carries no key of its own). The
 * gateway's key stays in `x-gateway-api-key`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ERROR_SOURCE_HEADER, ProviderError } from '../../core/errors.js';
import type { MessagesRequest } from '../../core/schemas/messages-request.js';
import { callContextFromRequest } from '../../gateway/call-context.js';
import type { GatewayDeps } from '../../gateway/deps.js';
import {
  asksForStream,
  ENDPOINTS,
  validateRequest,
  type EndpointDescriptor,
} from '../../gateway/endpoints.js';
import { contextOrRefuse, execute, refuseRequest } from '../../gateway/execute.js';
import { newRouteState } from '../../gateway/routing/route-types.js';
import { messagesCodec, messagesCodecFor } from '../../ingress/messages-codec.js';
import { toGatewayOrProviderError } from '../error-handler.js';
import { withClientProviderKey } from '../client-provider-key.js';
import { HttpSink } from '../http-sink.js';

/** The header Anthropic's clients carry their key in. */
const ANTHROPIC_KEY_HEADERS = ['x-api-key'];

function messagesErrorHandler(logger: Logger) {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply): void => {
    const mapped = toGatewayOrProviderError(error);
    if (mapped.status >= 500 && !(mapped instanceof ProviderError)) {
      logger.error({ err: error, method: request.method, url: request.url.split('?')[0] }, 'unhandled error');
    }
    reply.header(ERROR_SOURCE_HEADER, mapped instanceof ProviderError ? 'provider' : 'gateway');
    reply.headers(mapped.headers);
    void reply.code(mapped.status).type('application/json').send(messagesCodec.errorBody(mapped));
  };
}

function registerEndpoint(app: FastifyInstance, deps: GatewayDeps, endpoint: EndpointDescriptor): void {
  app.post(endpoint.path, async (request, reply) => {
    const how = { method: request.method, url: request.url };
    const gw = withClientProviderKey(request.gw, ANTHROPIC_KEY_HEADERS);
    let call: ReturnType<typeof validateRequest>;
    try {
      call = validateRequest(endpoint, request.body);
    } catch (err) {
      const sink = new HttpSink(reply, messagesCodec, undefined, newRouteState());
      refuseRequest(deps, endpoint.kind, request.body, sink, gw, how, err);
      return reply;
    }
    const stream = asksForStream(call);
    const state = newRouteState();
    // Both bodies are Messages requests (a count's answer has no content to show thinking in).
    const codec = messagesCodecFor(call.body as MessagesRequest);
    const sink = new HttpSink(reply, codec, stream ? codec.streamEncoder(call.body) : undefined, state);
    const ctx = await contextOrRefuse(deps, call, sink, gw, how, () =>
      callContextFromRequest(deps.lookups, gw, how, call.body.model),
    );
    if (!ctx) return reply;
    await execute(deps, { ...call, ctx, state }, sink);
    return reply;
  });
}

export async function registerMessagesRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  // A plugin of its own, so that every error of these routes — the onRequest hook's too — is answered in
  // Anthropic's shape, not the OpenAI one of the rest of /v1.
  await app.register(async (messages) => {
    messages.setErrorHandler(messagesErrorHandler(deps.logger));
    registerEndpoint(messages, deps, ENDPOINTS.messages);
    registerEndpoint(messages, deps, ENDPOINTS.count_tokens);
  });
}
