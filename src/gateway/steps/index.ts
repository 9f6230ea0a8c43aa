/** The chain of steps every target runs, outermost first (see target-step.ts). */
import { breakerStep } from './breaker-step.js';
import { cacheStep } from './cache-step.js';
import { continuationStep } from './continuation-step.js';
import { deadlineStep } from './deadline-step.js';
import { hooksStep } from './hooks-step.js';
import { estimatedCountStep, messagesStep } from './messages-step.js';
import { passthroughHooksStep } from './passthrough-hooks-step.js';
import { rateLimitStep } from './rate-limit-step.js';
import { responsesStep } from './responses-step.js';
import { retryStep } from './retry-step.js';
import { semanticCacheStep } from './semantic-cache-step.js';
import type { TargetStep } from './target-step.js';

// The Messages and Responses steps come first: a target without Anthropic's Messages API (or OpenAI's
// Responses API) natively is called with the request translated to chat, and every later step sees that
// request. Rate limits come next, in both chains: a
// call over a limit ends there, before any retry, hook or cache, and its 429 is thrown past the router, so
// no retry or fallback ever sees it. Hooks wrap the cache: input guardrails apply before a cached answer
// is given, and output checks see a cache hit as they see a provider's answer; the caches keep an answer
// only once those checks have passed it (TargetCall.outputChecks). Retry wraps both, so a 446
// or 246 listed in retry.on_status_codes is tried again. Hooks also wrap the continuation of a broken
// stream: input checks judge the client's request (a mutator's rewrite is what the continuation is built
// from), never the gateway's own request for the rest, and output checks judge the whole answer.
// A Messages token count a target cannot make is estimated just inside the hooks: the input checks judge
// it as they judge a count the provider makes.
// The semantic cache comes after the exact one, whose key it shares (semantic mode is a superset).
export const DEFAULT_TARGET_STEPS: readonly TargetStep[] = [
  messagesStep,
  responsesStep,
  rateLimitStep,
  retryStep,
  deadlineStep,
  hooksStep,
  estimatedCountStep,
  continuationStep,
  cacheStep,
  semanticCacheStep,
  breakerStep,
];

/** A pass-through call has no answer the gateway understands: nothing to cache or continue. */
export const PASSTHROUGH_STEPS: readonly TargetStep[] = [
  rateLimitStep,
  passthroughHooksStep,
  retryStep,
  deadlineStep,
  breakerStep,
];

export { composeSteps, type TargetCall, type TargetHandler, type TargetStep } from './target-step.js';
export { callTarget } from './attempt-step.js';
export { callPassthrough } from './passthrough-step.js';
export { hooksStep } from './hooks-step.js';
export { rateLimitStep } from './rate-limit-step.js';
export { estimatedCountStep, messagesStep } from './messages-step.js';
export { responsesStep } from './responses-step.js';
