/**
 * The checks a config may name, by id without the `default.` prefix: the built-in checks of src/hooks/.
 */
import type { CheckDefinition } from '../../hooks/check-types.js';

const CHECKS = new Map<string, CheckDefinition>();

export function findCheck(id: string): CheckDefinition | undefined {
  return CHECKS.get(id);
}

export function knownCheckIds(): string[] {
  return [...CHECKS.keys()].sort();
}
