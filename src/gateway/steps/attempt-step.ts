/**
 * The end of the chain: the call itself (fanned out into n calls for providers that give one choice per
 * call), with the deadlines of the node, noted in the walk's history.
 */
import type { AdapterRequest, EndpointKind, ModelRequest } from '../../providers/types.js';
import type { TargetConfig } from '../config/index.js';
import { targetStrictCompat } from '../call-context.js';
import { forwardedHeaders } from '../forwarded-headers.js';
import { runModelAttempt } from '../fanout.js';
import type { ResolvedTarget } from '../resolve-target.js';
import { modelRequestOf, recordAttempt, type RouteRun } from '../routing/route-types.js';
import type { TargetHandler } from './target-step.js';
import type { AttemptOutcome } from '../attempt.js';

/** The call as the adapter sees it: the target's request (override_params applied) and how to reach it. */
function adapterRequest<K extends EndpointKind>(
  { endpoint, body }: ModelRequest<K>,
  run: RouteRun,
  node: TargetConfig,
  resolved: ResolvedTarget,
): AdapterRequest<K> {
  const { ctx } = run.call;
  return {
    endpoint,
    body,
    stream: run.call.stream,
    target: resolved.target,
    forwardHeaders: forwardedHeaders(node, ctx, resolved),
    clientHeaders: ctx.clientHeaders,
    strictCompat: targetStrictCompat(node, ctx),
  };
}

// Not an async function: the attempt's own promise, with the record added when it settles.
export const callTarget: TargetHandler = (call) => {
  const { run, node, resolved } = call;
  const { deps } = run;
  const { ctx } = run.call;
  const started = performance.now();
  let attempt: Promise<AttemptOutcome>;
  try {
    const request = adapterRequest(modelRequestOf(call), run, node, resolved);
    const nodeTimeout = node.request_timeout ?? deps.settings.defaultRequestTimeoutMs;
    const continuing = (run.call.sink?.written ?? 0) > 0;
    const remaining = run.deadline - started;
    run.call.state.providerCalls += 1;
    attempt = runModelAttempt({
      resolved,
      request,
      upstream: deps.upstream,
      clientSignal: ctx.signal,
      timeoutMs: continuing ? nodeTimeout : Math.max(1, Math.min(nodeTimeout, remaining)),
      idleTimeoutMs: node.request_timeout ?? deps.settings.defaultStreamIdleTimeoutMs,
      limits: deps.settings.upstreamLimits,
      firstChunkBy: continuing ? undefined : run.deadline,
      sink: call.sink,
      clientBodyText: call.body === run.call.body ? run.call.bodyText : undefined,
    });
  } catch (err) {
    // Failed as the async function it replaces would: by rejection, for the steps around it.
    return Promise.reject(err);
  }
  return attempt.then((outcome) => {
    recordAttempt(run, {
      path: call.path,
      provider: resolved.adapter.id,
      model: call.model,
      body: call.body,
      outcome,
      started,
      retry: call.retry,
    });
    return outcome;
  });
};
