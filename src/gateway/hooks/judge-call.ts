/**
 * A model-judged check's question, asked through the gateway's own routing: an internal call
 * (`execute` into a BufferSink) under the caller's tenant and trace, with the stored config or virtual
 * key the check names. It is logged like any call, and traced inside the span of the hook that asked
 * (JobCall.withinSpanId). A judge's own config may not ask a judge in turn.
 */
import type { ChatCompletion } from '../../core/openai-types.js';
import { callContextFromJob, type CallContext } from '../call-context.js';
import { execute } from '../execute.js';
import { BufferSink } from '../sink.js';
import type { JudgeRunner } from './check-services.js';

const judgeCalls = new WeakSet<CallContext>();

export const runJudge: JudgeRunner = async (run, target, messages, model, signal, hookSpanId) => {
  const { deps } = run;
  const { ctx } = run.call;
  if (judgeCalls.has(ctx)) throw new Error("a judge's own hooks cannot ask a judge");
  let config: Record<string, unknown>;
  if (target.config !== undefined) {
    const stored = await deps.lookups.config(ctx.apiKey.workspace_id, target.config);
    if (!stored || stored.status !== 'active')
      throw new Error(`no config '${target.config}' in this workspace`);
    config = stored.config;
  } else if (target.virtual_key !== undefined) {
    config = { virtual_key: target.virtual_key };
  } else {
    throw new Error('the judge needs a config or a virtual_key');
  }
  const judgeCtx = callContextFromJob({
    caller: ctx.apiKey,
    config,
    url: '/v1/chat/completions',
    metadata: ctx.metadata,
    traceId: ctx.traceId,
    // Traced inside the hook that asked (or the judged call's request when that is not known).
    withinSpanId: hookSpanId ?? ctx.spanId,
    signal,
  });
  judgeCalls.add(judgeCtx);
  const sink = new BufferSink();
  // The judged call's model unless the judge's config sets its own (override_params.model).
  const running = execute(
    deps,
    { endpoint: 'chat', body: { model: model ?? 'default', messages }, ctx: judgeCtx },
    sink,
  );
  // The judgement is the judge's answer: `execute` goes on to record the call once the async hooks of the
  // judge's own config have ended, which the judged call does not wait for.
  const result = await Promise.race([sink.result, running.then(() => sink.result)]);
  if (result.kind === 'error') throw new Error(`the judge failed: ${result.error.message}`);
  if (result.kind !== 'answer') throw new Error('the judge answered with a stream');
  const content = (result.answer.body as ChatCompletion).choices[0]?.message?.content;
  return typeof content === 'string' ? content : '';
};
