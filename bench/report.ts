// Turns the measurements into the markdown table printed at the end and the JSON kept in bench/results/.
import { cpus, platform, totalmem } from 'node:os';
import type { Distribution } from './stats.js';
import { round } from './stats.js';
import type { ThroughputResult } from './measure-throughput.js';

type Per<T> = { direct?: T; bare?: T; gateway?: T };

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  node: string;
  platform: string;
  totalMemMB: number;
}

export const machineInfo = (): MachineInfo => ({
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? 'unknown',
  node: process.version,
  platform: `${platform()} ${process.arch}`,
  totalMemMB: Math.round(totalmem() / 1024 / 1024),
});

export interface BenchReport {
  date: string;
  mode: 'full' | 'quick';
  machine: MachineInfo;
  settings: {
    latencyRequests: number;
    ttfbRequests: number;
    throughputConnections: number;
    throughputDurationS: number;
    throughputUpstreamLatencyMs: number;
    gatewayHeaders: 'provider' | 'config';
    /** The `--config` JSON, as given (with `{{UPSTREAM}}`). */
    gatewayConfig?: string;
    /** The gateway ran with `--redis` (shared state and rate-limit counters in Redis). */
    redis?: boolean;
    /** The `--rate-limit-policy` policies created before measuring. */
    rateLimitPolicies?: Record<string, unknown>[];
  };
  latencyMs: Per<Distribution>;
  addedLatencyMs: { bare?: { p50: number; p99: number }; gateway?: { p50: number; p99: number } };
  throughput: Per<ThroughputResult> & { gatewayToBare?: number; bareToDirect?: number };
  ttfbMs: Per<Distribution>;
  addedTtfbMs: { bare?: { p50: number; p99: number }; gateway?: { p50: number; p99: number } };
  peakRssMB: { gateway?: number; bare?: number; upstream?: number };
  /** CPU time (all threads) of the server process per request in the concurrency-1 phase, in µs. */
  cpuPerRequestUs: Per<number>;
  gateway: { status: 'measured' | 'failed' | 'skipped'; reason?: string };
}

export function added(
  target?: Distribution,
  direct?: Distribution,
): { p50: number; p99: number } | undefined {
  if (!target || !direct || target.n === 0 || direct.n === 0) return undefined;
  return { p50: round(target.p50 - direct.p50), p99: round(target.p99 - direct.p99) };
}

const PENDING = 'pending';
const ms = (x?: number) => (x === undefined || Number.isNaN(x) ? PENDING : x.toFixed(3));
const int = (x?: number) =>
  x === undefined || Number.isNaN(x) ? PENDING : Math.round(x).toLocaleString('en-US');

type TargetName = 'direct' | 'bare' | 'gateway';
const rss = (x?: number) => x?.toFixed(1) ?? PENDING;

export function markdownTable(r: BenchReport): string {
  const pending = (v: string) => (r.gateway.status === 'measured' ? v : PENDING);
  /** A metric measured on all three targets. */
  const each = (
    label: string,
    format: (x?: number) => string,
    value: (target: TargetName) => number | undefined,
  ): string[] => [label, format(value('direct')), format(value('bare')), pending(format(value('gateway')))];
  /** A metric of the proxies, measured against the direct call. */
  const vsDirect = (label: string, value: (target: 'bare' | 'gateway') => number | undefined): string[] => [
    label,
    '—',
    ms(value('bare')),
    pending(ms(value('gateway'))),
  ];
  const rows: string[][] = [
    each('latency p50, c=1, 0 ms upstream (ms)', ms, (t) => r.latencyMs[t]?.p50),
    each('latency p99, c=1, 0 ms upstream (ms)', ms, (t) => r.latencyMs[t]?.p99),
    vsDirect('added latency p50 vs direct (ms)', (t) => r.addedLatencyMs[t]?.p50),
    vsDirect('added latency p99 vs direct (ms)', (t) => r.addedLatencyMs[t]?.p99),
    each('server CPU per request, c=1 (µs, all threads)', int, (t) => r.cpuPerRequestUs[t]),
    each(
      `requests/s, ${r.settings.throughputConnections} connections, ${r.settings.throughputUpstreamLatencyMs} ms upstream`,
      int,
      (t) => r.throughput[t]?.rps,
    ),
    [
      'requests/s ratio to bare proxy',
      r.throughput.direct && r.throughput.bare
        ? (r.throughput.direct.rps / r.throughput.bare.rps).toFixed(2)
        : PENDING,
      '1.00',
      pending(r.throughput.gatewayToBare?.toFixed(2) ?? PENDING),
    ],
    each('latency p99 under that load (ms)', int, (t) => r.throughput[t]?.latencyP99),
    each('stream time to first byte p50 (ms)', ms, (t) => r.ttfbMs[t]?.p50),
    each('stream time to first byte p99 (ms)', ms, (t) => r.ttfbMs[t]?.p99),
    vsDirect('added TTFB p50 vs direct (ms)', (t) => r.addedTtfbMs[t]?.p50),
    vsDirect('added TTFB p99 vs direct (ms)', (t) => r.addedTtfbMs[t]?.p99),
    each('peak RSS (VmHWM, MB)', rss, (t) => r.peakRssMB[t === 'direct' ? 'upstream' : t]),
  ];
  const lines = [
    '| metric | direct (fake upstream) | bare Node proxy | gateway |',
    '|---|---:|---:|---:|',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ];
  return lines.join('\n');
}
