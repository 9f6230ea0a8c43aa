/** The model endpoints: one route per descriptor of the endpoint registry, each through `execute`. */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { callContextFromRequest, type CallContext } from '../../gateway/call-context.js';
import type { GatewayDeps } from '../../gateway/deps.js';
import {
  asksForStream,
  ENDPOINTS,
  validateRequest,
  type EndpointDescriptor,
} from '../../gateway/endpoints.js';
import { contextOrRefuse, execute, refuseRequest, type ModelCall } from '../../gateway/execute.js';
import type { EndpointKind, ModelRequest } from '../../providers/types.js';
import { newRouteState, type RouteState } from '../../gateway/routing/route-types.js';
import type { IngressCodec } from '../../ingress/codec.js';
import { openAICodec } from '../../ingress/openai-codec.js';
import { HttpSink } from '../http-sink.js';
import { registerModelListRoute } from './models-list.js';

/** The OpenAI-shaped ingresses: each endpoint of the registry with the codec that frames its answers. */
const INGRESSES: Array<{ endpoint: EndpointDescriptor; codec: IngressCodec<never> }> = [
  { endpoint: ENDPOINTS.chat, codec: openAICodec },
  { endpoint: ENDPOINTS.completions, codec: openAICodec },
  { endpoint: ENDPOINTS.embeddings, codec: openAICodec },
];

export async function registerModelRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  for (const { endpoint, codec } of INGRESSES) {
    // Not an async handler: a call whose context is built at once (a key and config from the caches)
    // goes to `execute` without a promise of its own or a turn of the microtask queue.
    app.post(endpoint.path, (request, reply) => {
      const how = { method: request.method, url: request.url };
      let call: ModelRequest;
      try {
        call = validateRequest(endpoint, request.body);
      } catch (err) {
        const sink = new HttpSink(reply, codec, undefined, newRouteState());
        refuseRequest(deps, endpoint.kind, request.body, sink, request.gw, how, err);
        return reply;
      }
      const stream = endpoint.streams && asksForStream(call);
      const state = newRouteState();
      const sink = new HttpSink(
        reply,
        codec,
        stream ? codec.streamEncoder(call.body as never) : undefined,
        state,
      );
      // The body's text, for its log record, unless validation made another body of it.
      const bodyText = call.body === request.body ? (request.bodyText ?? undefined) : undefined;
      const ctx = contextOrRefuse(deps, call, sink, request.gw, how, () =>
        callContextFromRequest(deps.lookups, request.gw, how, call.body.model),
      );
      if (ctx instanceof Promise) {
        return ctx.then((built) => executeCall(deps, call, built, state, bodyText, sink, reply));
      }
      return executeCall(deps, call, ctx, state, bodyText, sink, reply);
    });
  }
  await registerModelListRoute(app, deps);
}

/**
 * The call, once its context is built (or refused: the refusal is answered already). A function of its
 * own rather than a closure over the route's state: nearly every call gets its context at once.
 */
function executeCall<K extends EndpointKind>(
  deps: GatewayDeps,
  { endpoint, body }: ModelRequest<K>,
  ctx: CallContext | undefined,
  state: RouteState,
  bodyText: string | undefined,
  sink: HttpSink,
  reply: FastifyReply,
): FastifyReply | Promise<FastifyReply> {
  if (!ctx) return reply;
  // Field by field: one shape, where a spread of the request copied its fields and then added three. (The
  // endpoint and its body stay paired, as read from one ModelRequest<K>; TypeScript cannot follow that
  // through the union.)
  const call = { endpoint, body, ctx, state, bodyText } as ModelCall;
  return execute(deps, call, sink).then(() => reply);
}
