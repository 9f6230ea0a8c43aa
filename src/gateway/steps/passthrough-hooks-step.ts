/**
 * A pass-through call's body is the provider's own, which the gateway does not read: no check can see
 * it. A config whose hooks would apply to such a call is refused rather than relayed unchecked — a
 * `deny` guardrail that silently let a call through would be a security hole.
 */
import { fieldError } from '../../core/validator/compile-validator.js';
import { gatewayFailure } from '../attempt.js';
import { hasHooks } from '../config/index.js';
import type { TargetStep } from './target-step.js';

const HOOK_KEYS = [
  'before_request_hooks',
  'input_guardrails',
  'after_request_hooks',
  'output_guardrails',
] as const;

export const passthroughHooksStep: TargetStep = (next) => (call) => {
  if (!hasHooks(call.node)) return next(call);
  const key = HOOK_KEYS.find((name) => (call.node[name]?.length ?? 0) > 0) as (typeof HOOK_KEYS)[number];
  const param = call.path ? `config.${call.path}.${key}` : `config.${key}`;
  return Promise.resolve(
    gatewayFailure(
      fieldError(
        'unsupported_parameter',
        param,
        "applies to this call, but hooks and guardrails do not run on pass-through calls (their bodies are the provider's own); use a config without them",
      ),
      'config',
    ),
  );
};
