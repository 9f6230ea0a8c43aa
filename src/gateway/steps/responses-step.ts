/**
 * The Responses API on every provider. A target whose adapter has the API natively (OpenAI, Azure OpenAI:
 * a `responses` operation) is called with the Responses request the route rebuilt (the whole conversation,
 * `store: false`), less the reasoning it cannot read: another provider's signed thinking, and reasoning
 * another account encrypted (responses/reasoning-accounts.ts). Any other target
 * gets the request translated to a chat completion (gateway/responses/to-chat-request.ts), so every later
 * step — rate limits, hooks and guardrails, cache, breaker — and the adapter see the chat request they
 * know; the Responses ingress turns its chat answer into the Response. The choice is made per target: one
 * fallback walk may call OpenAI natively and then Anthropic translated, with the same conversation. A
 * translated stream that broke mid-way is continued as chat on the next target, native or not.
 *
 * A refusal of the translated request names the client's field, not the chat request's
 * (responses/responses-param.ts). The translated call is not strict (thinking comes back as `content_blocks`, shown as reasoning items),
 * asks a stream's usage, and carries `reasoning.effort` as the option the target reads: the gateway's
 * `thinking` budget where the adapter has thinking, else `reasoning_effort` (OpenAI-wire providers).
 */
import { GatewayError, ProviderError } from '../../core/errors.js';
import type { ResponsesRequest } from '../../core/schemas/responses-request.js';
import type { ProviderAdapter } from '../../providers/types.js';
import { gatewayFailure, type AttemptOutcome } from '../attempt.js';
import { clientTerms, sentItemPath, type MessageOrigin } from '../responses/item-paths.js';
import { inputItemsOf } from '../responses/response-call.js';
import type { ConversationItem } from '../responses/response-types.js';
import { accountTagOf, producedBy } from '../responses/reasoning-accounts.js';
import { isReasoningItem, isThinkingReasoning } from '../responses/reasoning-items.js';
import { inResponsesTerms, responsesParam } from '../responses/responses-param.js';
import { toChatRequest } from '../responses/to-chat-request.js';
import { continuesAStream } from './continuation-step.js';
import { hasNatively } from './native-operation.js';
import type { TargetCall, TargetHandler, TargetStep } from './target-step.js';

function itemsOf(body: ResponsesRequest): ConversationItem[] {
  return typeof body.input === 'string' ? inputItemsOf(body.input) : (body.input as ConversationItem[]);
}

/**
 * The request as a native target gets it: encrypted reasoning only where this very account produced it
 * (another provider's thinking, or another account's reasoning, would be refused); and, when some was left
 * out, the pipeline's index of each item sent (for an error naming one).
 */
function nativeBody(
  body: ResponsesRequest,
  account: string | undefined,
): { body: ResponsesRequest; sent?: number[] } {
  if (typeof body.input === 'string') return { body };
  const sent: number[] = [];
  body.input.forEach((item, index) => {
    const readable =
      !isReasoningItem(item) ||
      (!isThinkingReasoning(item) &&
        item.encrypted_content != null &&
        account !== undefined &&
        producedBy(item.id, account));
    if (readable) sent.push(index);
  });
  if (sent.length === body.input.length) return { body };
  return {
    body: { ...body, input: sent.map((index) => body.input[index]!) as ResponsesRequest['input'] },
    sent,
  };
}

function translated(
  next: TargetHandler,
  call: TargetCall<'responses'>,
  adapter: ProviderAdapter,
): Promise<AttemptOutcome> {
  const offset = call.run.call.state.responsesInputOffset;
  const origins: MessageOrigin[] = [];
  const terms = (param: string) => clientTerms(responsesParam(param, origins) ?? param, offset);
  let chat;
  try {
    chat = toChatRequest(call.body, itemsOf(call.body), origins);
  } catch (err) {
    if (err instanceof GatewayError || err instanceof ProviderError) {
      return Promise.resolve(inResponsesTerms(gatewayFailure(err, 'config'), terms));
    }
    throw err;
  }
  const effort = call.body.reasoning?.effort;
  if (effort != null && !adapter.capabilities.thinking) {
    delete chat.thinking;
    chat.reasoning_effort = effort;
  } else if (adapter.capabilities.takesThinking?.(call.model ?? chat.model, call.resolved.target) === false) {
    // A model of a provider with thinking that takes none (DeepSeek R1 on Converse, which reasons unasked;
    // Llama) is sent none, as the Messages API sends it: the reasoning it answers is still shown.
    delete chat.thinking;
  }
  if (chat.stream) chat.stream_options = { include_usage: true };
  return next({
    ...call,
    endpoint: 'chat',
    body: chat,
    node: { ...call.node, strict_compat_compliance: false },
  }).then((outcome) => inResponsesTerms(outcome, terms));
}

export const responsesStep: TargetStep = (next) => (call) => {
  if (call.endpoint !== 'responses') return next(call);
  const { adapter } = call.resolved;
  const { state } = call.run.call;
  // A stream an earlier target translated goes on as chat even here: only a chat answer can be joined to
  // the message item the client has open (a broken native stream is never continued: canTakeOver).
  if (hasNatively(adapter, 'responses', call.body) && !continuesAStream(call)) {
    const account = accountTagOf(call.resolved);
    state.responsesAccount = account ?? null;
    const { body, sent } = nativeBody(call.body, account);
    const terms = (param: string) => clientTerms(sentItemPath(param, sent), state.responsesInputOffset);
    return next({ ...call, body }).then((outcome) => inResponsesTerms(outcome, terms));
  }
  state.responsesAccount = null;
  return translated(next, call, adapter);
};
