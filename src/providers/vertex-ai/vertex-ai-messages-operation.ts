/**
 * Anthropic Messages natively on Vertex AI, for Claude models: `rawPredict` / `streamRawPredict` on the
 * `anthropic` publisher, with Anthropic's own body (the model in the URL, `anthropic_version:
 * vertex-2023-10-16` in the body). The answer and the SSE events are Anthropic's and are relayed as they
 * are. Gemini models on Vertex have no such API: their Messages calls are translated.
 */
import {
  MessagesEventRelay,
  messagesAnswerUsage,
  refuseNonBase64Images,
  withAutomaticCacheBreakpoint,
} from '../anthropic/index.js';
import type { OperationHandler } from '../types.js';
import {
  VERTEX_ANTHROPIC_VERSION,
  vertexAnthropicHeaders,
  vertexAnthropicModelId,
} from './vertex-ai-anthropic.js';
import { vertexBearer } from './vertex-ai-bearer.js';
import {
  dedicatedTrafficStream,
  vertexRequestTypeHeaders,
  withDedicatedTraffic,
} from './vertex-ai-request-type.js';
import { vertexModelIdFor } from './vertex-ai-model-project.js';
import { vertexModelUrl } from './vertex-ai-urls.js';

export const vertexMessagesOperation: OperationHandler<'messages'> = {
  accepts: (body) => vertexAnthropicModelId(body.model) !== undefined,

  buildRequest(req) {
    refuseNonBase64Images(req.body, 'vertex-ai');
    // Vertex AI refuses a request-level cache_control: the breakpoint goes where Anthropic would put it.
    const { model, ...rest } = withAutomaticCacheBreakpoint(req.body);
    const action = req.stream ? 'streamRawPredict' : 'rawPredict';
    const id = vertexModelIdFor(req.target, model);
    return {
      method: 'POST',
      url: vertexModelUrl(req.target, 'anthropic', vertexAnthropicModelId(id) ?? id, action),
      headers: {
        'content-type': 'application/json',
        ...req.forwardHeaders,
        ...vertexRequestTypeHeaders(req.target),
        ...vertexBearer(req),
        ...vertexAnthropicHeaders(req),
      },
      body: JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest }),
    };
  },
  parseResponse: (_req, res) => res.body,
  usageOf: (body, req) => withDedicatedTraffic(req.target, messagesAnswerUsage(body)),
  createStreamTranslator: (req) =>
    dedicatedTrafficStream(req.target, new MessagesEventRelay('vertex-ai'), { chunks: false }),
};
