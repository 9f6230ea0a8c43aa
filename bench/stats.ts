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

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function geomean(values: number[]): number {
  return Math.exp(values.reduce((sum, v) => sum + Math.log(v), 0) / values.length);
}
