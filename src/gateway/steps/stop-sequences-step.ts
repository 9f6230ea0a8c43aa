/**
 * A chat or text completion's `stop` bounded by the target's provider (../stop-sequences.ts): more strings
 * than it takes are refused with 400 naming `stop`, before any call and before the rate limits charge for
 * it; in a fallback, that is the target's failure and the walk goes on. A `stop` the config's
 * override_params set is named there, as the other checks of an override name it.
 */
import { stopSequenceBound } from '../../providers/registry.js';
import { gatewayFailure } from '../attempt.js';
import { stopSequencesRefusal } from '../stop-sequences.js';
import type { TargetStep } from './target-step.js';

// Not an async function: a call within the bound passes through to the next step's own promise.
export const stopSequencesStep: TargetStep = (next) => (call) => {
  if (call.endpoint !== 'chat' && call.endpoint !== 'completions') return next(call);
  const { stop } = call.body;
  if (!Array.isArray(stop)) return next(call);
  const model = call.model ?? call.body.model;
  const overridden = (call.node.override_params as Record<string, unknown> | undefined)?.stop !== undefined;
  const where = `config.${call.path ? `${call.path}.` : ''}override_params.stop`;
  const refusal = overridden
    ? stopSequencesRefusal(
        stopSequenceBound(call.resolved.adapter, model),
        stop.length,
        where,
        'invalid_config',
      )
    : stopSequencesRefusal(stopSequenceBound(call.resolved.adapter, model), stop.length, 'stop');
  return refusal ? Promise.resolve(gatewayFailure(refusal, 'config')) : next(call);
};
