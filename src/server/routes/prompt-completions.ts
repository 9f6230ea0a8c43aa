/**
 * Prompt completions, an ingress of the one pipeline: the stored prompt's version is rendered into a chat
 * (or text) completion request, which runs through `execute` like any other — routing, retries,
 * fallbacks, cache, hooks and guardrails, the log — under the config the request names, else the one the
 * version names. The answer is the prompt envelope (`/completions`) or the plain OpenAI object
 * (`/chat/completions`, which is where the `openai` SDK's chat client lands with its base URL at
 * `/v1/prompts/{promptId}`); `/render` returns the request without calling a model.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { callContextFromRequest } from '../../gateway/call-context.js';
import { HEADERS } from '../../gateway/context.js';
import type { GatewayDeps } from '../../gateway/deps.js';
import { asksForStream } from '../../gateway/endpoints.js';
import { contextOrRefuse, execute } from '../../gateway/execute.js';
import { preparePromptCall, type PreparedPromptCall } from '../../gateway/prompts/prompt-call.js';
import { expandPromptTargets } from '../../gateway/prompts/prompt-targets.js';
import { newRouteState, type RouteState } from '../../gateway/routing/route-types.js';
import type { IngressCodec } from '../../ingress/codec.js';
import { openAICodec } from '../../ingress/openai-codec.js';
import { promptEnvelopeCodec } from '../../ingress/prompt-envelope-codec.js';
import { answerHeaders, HttpSink } from '../http-sink.js';
import { pathParam } from './management/route-helpers.js';

type CodecFor = (reply: FastifyReply, state: RouteState) => IngressCodec<never>;

/** The prompt ingresses: each path with the codec that frames its answers. */
const INGRESSES: Array<{ path: string; codec: CodecFor }> = [
  {
    path: '/prompts/:promptId/completions',
    codec: (reply, state) => promptEnvelopeCodec((answer) => answerHeaders(reply, state, answer)),
  },
  { path: '/prompts/:promptId/chat/completions', codec: () => openAICodec },
];

async function prepare(deps: GatewayDeps, request: FastifyRequest): Promise<PreparedPromptCall> {
  return preparePromptCall(
    deps.lookups,
    request.gw.apiKey.workspace_id,
    pathParam(request.params, 'promptId'),
    request.body,
  );
}

/** The headers the config is resolved from: the request's own config wins over the version's. */
function configHeaders(request: FastifyRequest, prepared: PreparedPromptCall): IncomingHttpHeaders {
  const { headers } = request.gw;
  if (prepared.destination === undefined || headers[HEADERS.config] !== undefined) return headers;
  return { ...headers, [HEADERS.config]: prepared.destination };
}

export async function registerPromptCompletionRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  for (const { path, codec: codecFor } of INGRESSES) {
    app.post(path, async (request, reply) => {
      const prepared = await prepare(deps, request);
      const { request: call, prompt } = prepared;
      reply.header(HEADERS.promptId, prompt.id);
      reply.header(HEADERS.promptVersion, String(prompt.version));
      const state = newRouteState();
      const codec = codecFor(reply, state);
      const stream = asksForStream(call);
      const sink = new HttpSink(
        reply,
        codec,
        stream ? codec.streamEncoder(call.body as never) : undefined,
        state,
      );
      const how = { method: request.method, url: request.url, prompt };
      const ctx = await contextOrRefuse(deps, call, sink, request.gw, how, async () => {
        const resolved = await callContextFromRequest(
          deps.lookups,
          request.gw,
          how,
          configHeaders(request, prepared),
        );
        return expandPromptTargets(deps.lookups, resolved, request.body, call.endpoint);
      });
      if (!ctx) return reply;
      await execute(deps, { ...call, ctx, state }, sink);
      return reply;
    });
  }

  app.post('/prompts/:promptId/render', async (request) => {
    const { request: call, prompt } = await prepare(deps, request);
    return {
      object: 'prompt.render' as const,
      prompt_id: prompt.id,
      slug: prompt.slug,
      version: prompt.version,
      endpoint: call.endpoint === 'chat' ? '/v1/chat/completions' : '/v1/completions',
      body: call.body,
    };
  });
}
