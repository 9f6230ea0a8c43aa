/**
 * The request's deadline: no new call starts once it has passed. Once the client holds part of a streamed
 * answer, the deadline no longer cuts it short: only the per-call deadlines apply to a continuation.
 */
import { GatewayError } from '../../core/errors.js';
import { gatewayFailure } from '../attempt.js';
import type { TargetStep } from './target-step.js';
import { continuesAStream } from './continuation-step.js';

/**
 * Less than this left is no time for a call. Node's timers count whole milliseconds from the event loop's
 * clock, so the timer that ended the call before may fire up to a millisecond before performance.now()
 * reaches the deadline; a call started in what is left would only be cut at once, and counted as tried.
 */
const TIMER_RESOLUTION_MS = 1;

// The steps hand the call on without an async frame of their own when they have nothing to do: each
// would be one more promise and microtask per call.
export const deadlineStep: TargetStep = (next) => (call) => {
  if (call.run.deadline - performance.now() < TIMER_RESOLUTION_MS && !continuesAStream(call)) {
    return Promise.resolve(
      gatewayFailure(
        new GatewayError('request_timeout', 'The request ran out of time before an answer'),
        'timeout',
      ),
    );
  }
  return next(call);
};
