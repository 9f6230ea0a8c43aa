/**
 * The config's hooks and guardrails around a target's call (hooks/target-hooks.ts). A node without hooks
 * hands the call on as it came, without an async frame of its own.
 */
import { hasHooks } from '../config/index.js';
import { callWithHooks } from '../hooks/target-hooks.js';
import type { TargetStep } from './target-step.js';

export const hooksStep: TargetStep = (next) => (call) =>
  hasHooks(call.node) ? callWithHooks(next, call) : next(call);
