/**
 * Prompt completions, an ingress of the one pipeline: the stored prompt's version is rendered into a chat
 * (or text) completion request, which runs through `execute` like any other — routing, retries,
 * fallbacks, cache, hooks and guardrails, the log — under the config the request names, else the one the
 * version names. The answer is the prompt envelope (`/completions`) or the plain OpenAI object
 * (`/chat/completions`, which is where the `openai` SDK's chat client lands with its base URL at
 * `/v1/prompts/{promptId}`); `/render` returns the request without calling a model (as `body`, and as
 * `data` beside `success` for Portkey's SDKs).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../core/errors.js';
import { callContextFromRequest } from '../../gateway/call-context.js';
import { HEADERS } from '../../gateway/context.js';
import type { GatewayDeps } from '../../gateway/deps.js';
import { asksForStream } from '../../gateway/endpoints.js';
import { contextOrRefuse, execute } from '../../gateway/execute.js';
import {
  destinationError,
  preparePromptCall,
  type PreparedPromptCall,
} from '../../gateway/prompts/prompt-call.js';
import { expandPromptTargets } from '../../gateway/prompts/prompt-targets.js';
import { newRouteState, type RouteState } from '../../gateway/routing/route-types.js';
import type { IngressCodec } from '../../ingress/codec.js';
import { openAICodec } from '../../ingress/openai-codec.js';
import { promptEnvelopeCodec } from '../../ingress/prompt-envelope-codec.js';
import { answerHeaders, HttpSink } from '../http-sink.js';
import { pathParam } from './management/route-helpers.js';

type CodecFor = (reply: FastifyReply, state: RouteState) => IngressCodec<never>;

/** The prompt ingresses: each path with the codec that frames its answers, and the one kind of prompt
 * it runs when it is not any (a chat completion path answers chat completions only). */
const INGRESSES: Array<{ path: string; codec: CodecFor; only?: 'chat' }> = [
  {
    path: '/prompts/:promptId/completions',
    codec: (reply, state) => promptEnvelopeCodec((answer) => answerHeaders(reply, state, answer)),
  },
  { path: '/prompts/:promptId/chat/completions', codec: () => openAICodec, only: 'chat' },
];

/** `unknownVariables: 'later'`: a completion checks them once its config says which prompts it may send. */
async function prepare(
  deps: GatewayDeps,
  request: FastifyRequest,
  unknownVariables?: 'later',
): Promise<PreparedPromptCall> {
  return preparePromptCall(
    deps.lookups,
    request.gw.apiKey.workspace_id,
    pathParam(request.params, 'promptId'),
    request.body,
    unknownVariables,
  );
}

/** The headers the config is resolved from: the request's own config wins over the version's. */
function configHeaders(request: FastifyRequest, prepared: PreparedPromptCall): IncomingHttpHeaders {
  const { headers } = request.gw;
  if (prepared.destination === undefined || headers[HEADERS.config] !== undefined) return headers;
  return { ...headers, [HEADERS.config]: prepared.destination };
}

export async function registerPromptCompletionRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  for (const { path, codec: codecFor, only } of INGRESSES) {
    app.post(path, async (request, reply) => {
      const prepared = await prepare(deps, request, 'later');
      const { request: call, prompt } = prepared;
      if (only !== undefined && call.endpoint !== only) {
        throw new GatewayError(
          'unsupported_endpoint',
          `The prompt "${prompt.slug}" is a text completion prompt, answered at ` +
            `POST /v1/prompts/${prompt.slug}/completions`,
          { param: 'promptId' },
        );
      }
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
        const headers = configHeaders(request, prepared);
        // Where neither the headers nor the version say where to go, the rendered request's model may (a
        // catalog model, `@<provider_slug>/<model>`): the version's, or the one the call overrides it with.
        const model = (call.body as { model?: unknown }).model;
        let resolved;
        try {
          resolved = await callContextFromRequest(deps.lookups, request.gw, how, model, headers);
        } catch (err) {
          // The request's own headers (its config, if any) are named as sent; the version's destination
          // is named as the prompt's.
          throw headers === request.gw.headers ? err : destinationError(err, prompt, 'promptId');
        }
        return expandPromptTargets(deps.lookups, resolved, request.body, prepared);
      });
      if (!ctx) return reply;
      await execute(deps, { ...call, ctx, state }, sink);
      return reply;
    });
  }

  // The request as `body`, and again as `data` beside `success`, where Portkey's SDKs read a render.
  app.post('/prompts/:promptId/render', async (request) => {
    const { request: call, prompt } = await prepare(deps, request);
    return {
      object: 'prompt.render' as const,
      prompt_id: prompt.id,
      slug: prompt.slug,
      version: prompt.version,
      endpoint: call.endpoint === 'chat' ? '/v1/chat/completions' : '/v1/completions',
      body: call.body,
      success: true as const,
      data: call.body,
    };
  });
}
