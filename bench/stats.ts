// Percentiles over raw samples (no histogram bucketing: a few thousand samples sort in microseconds).
export interface Distribution {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  max: number;
}

export function summarise(samplesMs: number[]): Distribution {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mean = sorted.reduce((s, x) => s + x, 0) / (sorted.length || 1);
  return { n: sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), mean, max: sorted.at(-1) ?? NaN };
}

export const round = (x: number, digits = 3): number => Math.round(x * 10 ** digits) / 10 ** digits;
