/** The model endpoints: one route per descriptor of the endpoint registry, each through `execute`. */
import type { FastifyInstance } from 'fastify';
import { callContextFromRequest, type CallContext } from '../../gateway/call-context.js';
import type { GatewayDeps } from '../../gateway/deps.js';
import {
  asksForStream,
  ENDPOINTS,
  validateRequest,
  type EndpointDescriptor,
} from '../../gateway/endpoints.js';
import { contextOrRefuse, execute, refuseRequest } from '../../gateway/execute.js';
import type { ModelRequest } from '../../providers/types.js';
import { newRouteState } from '../../gateway/routing/route-types.js';
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
      const run = (ctx: CallContext | undefined) =>
        ctx ? execute(deps, { ...call, ctx, state, bodyText }, sink).then(() => reply) : reply;
      const ctx = contextOrRefuse(deps, call, sink, request.gw, how, () =>
        callContextFromRequest(deps.lookups, request.gw, how),
      );
      return ctx instanceof Promise ? ctx.then(run) : run(ctx);
    });
  }
  await registerModelListRoute(app, deps);
}
