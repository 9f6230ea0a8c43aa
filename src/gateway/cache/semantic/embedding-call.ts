/**
 * The semantic cache's embedding, asked through the gateway's own routing: an internal call (`execute`
 * into a BufferSink) under the caller's tenant and trace, to the virtual key or stored config the cache
 * names. It is logged like any call, and traced inside the span of the request that asked for it
 * (JobCall.withinSpanId). Imported only by the wiring (gateway-server.ts), so the step chain
 * does not import the pipeline that runs it.
 */
import { CallAbort } from '../../../core/abort.js';
import type { EmbeddingResponse } from '../../../core/openai-types.js';
import { callContextFromJob } from '../../call-context.js';
import { execute } from '../../execute.js';
import type { EmbeddingTarget, SemanticEmbedder } from '../../pipeline-types.js';
import { BufferSink } from '../../sink.js';

/** The stored config or virtual key an embedding is asked of, as a config. */
async function configOf(
  lookups: Parameters<SemanticEmbedder>[0]['deps']['lookups'],
  workspaceId: string,
  target: EmbeddingTarget,
): Promise<Record<string, unknown>> {
  if (target.config !== undefined) {
    const stored = await lookups.config(workspaceId, target.config);
    if (!stored || stored.status !== 'active')
      throw new Error(`no config '${target.config}' in this workspace`);
    return stored.config;
  }
  return { virtual_key: target.virtual_key };
}

export const embedThroughGateway: SemanticEmbedder = async (run, target, text, timeoutMs) => {
  const { deps } = run;
  const { ctx } = run.call;
  const config = await configOf(deps.lookups, ctx.apiKey.workspace_id, target);
  // Ended with the caller's request, or once its time is up: an embedding target that hangs must cost the
  // request a miss, not hold it for the embedding call's own (default) deadline.
  const abort = new CallAbort();
  if (ctx.signal.aborted) abort.abort();
  else ctx.signal.addEventListener('abort', abort, { once: true });
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const sink = new BufferSink();
  let result: Awaited<BufferSink['result']>;
  try {
    const embedCtx = callContextFromJob({
      caller: ctx.apiKey,
      config,
      url: '/v1/embeddings',
      metadata: ctx.metadata,
      traceId: ctx.traceId,
      // Traced inside the request that asked for it.
      withinSpanId: ctx.spanId,
      signal: abort,
    });
    const running = execute(
      deps,
      { endpoint: 'embeddings', body: { model: target.model, input: text }, ctx: embedCtx },
      sink,
    );
    // The vector is the embedding's answer: `execute` goes on to record the call once the async hooks of
    // the embedding's own config have ended, which the request does not wait for.
    result = await Promise.race([sink.result, running.then(() => sink.result)]);
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', abort);
  }
  if (abort.aborted) throw new Error(`the embedding did not answer within ${timeoutMs} ms`);
  if (result.kind === 'error') throw new Error(`the embedding failed: ${result.error.message}`);
  if (result.kind !== 'answer') throw new Error('the embedding answered with a stream');
  const vector = (result.answer.body as EmbeddingResponse).data?.[0]?.embedding;
  if (!Array.isArray(vector) || vector.length === 0 || !vector.every((x) => typeof x === 'number')) {
    throw new Error('the embedding answer holds no vector');
  }
  return vector;
};
