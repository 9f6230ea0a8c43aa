/**
 * The loadbalance picker: one index drawn with probability proportional to its weight. A target without
 * `weight` weighs 1; weight 0 is never chosen. When every weight is 0 there is nothing to choose from:
 * the config is refused (400, config-rules.ts) rather than guessing.
 */
export const DEFAULT_WEIGHT = 1;

export function weightsOf(targets: readonly { weight?: number }[]): number[] {
  return targets.map((t) => (typeof t.weight === 'number' && t.weight >= 0 ? t.weight : DEFAULT_WEIGHT));
}

/** Returns the chosen index, or -1 when no weight is positive. `random` returns [0, 1). */
export function pickWeighted(weights: readonly number[], random: () => number = Math.random): number {
  let total = 0;
  for (const w of weights) if (w > 0) total += w;
  if (total <= 0) return -1;
  let point = random() * total;
  let last = -1;
  for (let i = 0; i < weights.length; i++) {
    if (weights[i] <= 0) continue;
    last = i;
    if (point < weights[i]) return i;
    point -= weights[i];
  }
  // Floating-point rounding can leave `point` a hair above the last weight.
  return last;
}
