/**
 * Anthropic Messages on every provider. A target whose adapter has the API natively for the request's model
 * (Anthropic; Claude on Bedrock and Vertex AI: `OperationHandler.accepts`) is called with the client's own
 * body. Any other target gets the request translated to a chat completion (gateway/messages/), so every
 * later step — rate limits, hooks and guardrails, cache, breaker — and the adapter see the chat request
 * they know; its answer comes back as chat and the Messages codec (ingress/messages-codec.ts) frames it
 * for the client. The translated call is not strict: thinking comes back as `content_blocks`, which the
 * codec turns into thinking blocks when the request asked for thinking (and leaves out otherwise). Thinking
 * is asked as the gateway's option where the adapter has one, else as OpenAI's `reasoning_effort`
 * (messages/thinking-as-reasoning-effort.ts). A translated stream that broke mid-way is continued as chat
 * on the next target, native or not.
 *
 * `count_tokens` on a target without a count of its own is answered with an estimate
 * (messages/estimate-input-tokens.ts), without a call, by `estimatedCountStep`: a step of its own inside
 * the hooks, so that the config's input checks judge an estimated count as they judge a native one.
 */
import { GatewayError, ProviderError } from '../../core/errors.js';
import { stopSequenceBound } from '../../providers/registry.js';
import { gatewayFailure, type AttemptOutcome } from '../attempt.js';
import { estimateInputTokens } from '../messages/estimate-input-tokens.js';
import { messagesParam, translateMessages, type ChatOrigin } from '../messages/messages-to-chat.js';
import { thinkingAsReasoningEffort, withoutThinking } from '../messages/thinking-as-reasoning-effort.js';
import { continuesAStream } from './continuation-step.js';
import { hasNatively } from './native-operation.js';
import type { TargetCall, TargetHandler, TargetStep } from './target-step.js';

/**
 * A refusal of the translated request (an adapter's: Converse takes no image by URL, say) names the
 * client's field, not the chat request's: `messages[2].content[1].image_url` of the chat request may be the
 * client's `messages[1].content[2].source`.
 */
function inClientTerms(outcome: AttemptOutcome, origins: readonly ChatOrigin[]): AttemptOutcome {
  if (outcome.ok || !(outcome.error instanceof GatewayError) || outcome.error.param === null) return outcome;
  const { error } = outcome;
  const chatParam = error.param as string;
  const param = messagesParam(chatParam, origins);
  if (param === undefined) return outcome;
  const message = error.message.split(chatParam).join(param);
  return {
    ...outcome,
    error: new GatewayError(error.code, message, { param, headers: error.headers, cause: error.cause }),
  };
}

function translated(next: TargetHandler, call: TargetCall<'messages'>): Promise<AttemptOutcome> {
  let body;
  let origins: ChatOrigin[];
  try {
    ({ body, origins } = translateMessages(call.body, {
      cacheControl: call.resolved.adapter.capabilities.promptCaching === true,
      stopSequences: stopSequenceBound(call.resolved.adapter, call.model ?? call.body.model),
    }));
  } catch (err) {
    if (err instanceof GatewayError || err instanceof ProviderError) {
      return Promise.resolve(gatewayFailure(err, 'config'));
    }
    throw err;
  }
  // The gateway's thinking option reaches the providers whose adapters have thinking, for the models that
  // take it; the others take OpenAI's reasoning_effort, where their model does. A model of a provider with
  // thinking that does not take it (DeepSeek R1 on Converse, which reasons unasked; Llama) is sent none, as
  // OpenAI's gpt-4o is: whatever reasoning it answers is still shown, thinking having been asked.
  const { adapter, target } = call.resolved;
  const model = call.model ?? body.model;
  if (!adapter.capabilities.thinking) {
    body = thinkingAsReasoningEffort(body, model, call.body.output_config?.effort);
  } else if (adapter.capabilities.takesThinking?.(model, target) === false) {
    body = withoutThinking(body);
  }
  return next({
    ...call,
    endpoint: 'chat',
    body,
    node: { ...call.node, strict_compat_compliance: false },
  }).then((outcome) => inClientTerms(outcome, origins));
}

async function estimated(call: TargetCall<'count_tokens'>): Promise<AttemptOutcome> {
  return {
    ok: true,
    status: 200,
    streamed: false,
    body: { input_tokens: await estimateInputTokens(call.body) },
    // Counting spends no tokens: a rate-limit reservation is settled to none.
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    model: call.model,
    upstreamHeaders: {},
    ttfbMs: null,
    malformedChunks: 0,
  };
}

// Not an async function: an OpenAI call passes through to the next step's own promise.
export const messagesStep: TargetStep = (next) => (call) => {
  // A stream an earlier target translated goes on as chat even on a native target: only chat chunks can be
  // joined to the content block the client has open (a broken native stream is never continued).
  if (call.endpoint === 'messages') {
    if (!hasNatively(call.resolved.adapter, 'messages', call.body) || continuesAStream(call)) {
      return translated(next, call);
    }
  }
  return next(call);
};

/** A count on a target without one of its own: answered with the estimate, past the rate limits and hooks. */
export const estimatedCountStep: TargetStep = (next) => (call) =>
  call.endpoint === 'count_tokens' && !hasNatively(call.resolved.adapter, 'count_tokens', call.body)
    ? estimated(call)
    : next(call);
