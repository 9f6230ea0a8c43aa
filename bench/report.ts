// Turns the measurements into the markdown table printed at the end and the JSON kept in bench/results/.
import type { Distribution } from './stats.js';
import { round } from './stats.js';
import type { ThroughputResult } from './measure-throughput.js';

type Per<T> = { direct?: T; bare?: T; gateway?: T };

export interface BenchReport {
  date: string;
  mode: 'full' | 'quick';
  machine: { cpus: number; cpuModel: string; node: string; platform: string; totalMemMB: number };
  settings: {
    latencyRequests: number;
    ttfbRequests: number;
    throughputConnections: number;
    throughputDurationS: number;
    throughputUpstreamLatencyMs: number;
    gatewayHeaders: 'provider' | 'config';
    /** The `--config` JSON, as given (with `{{UPSTREAM}}`). */
    gatewayConfig?: string;
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

export function markdownTable(r: BenchReport): string {
  const pending = (v: string) => (r.gateway.status === 'measured' ? v : PENDING);
  const rows: [string, string, string, string][] = [
    [
      'latency p50, c=1, 0 ms upstream (ms)',
      ms(r.latencyMs.direct?.p50),
      ms(r.latencyMs.bare?.p50),
      pending(ms(r.latencyMs.gateway?.p50)),
    ],
    [
      'latency p99, c=1, 0 ms upstream (ms)',
      ms(r.latencyMs.direct?.p99),
      ms(r.latencyMs.bare?.p99),
      pending(ms(r.latencyMs.gateway?.p99)),
    ],
    [
      'added latency p50 vs direct (ms)',
      '—',
      ms(r.addedLatencyMs.bare?.p50),
      pending(ms(r.addedLatencyMs.gateway?.p50)),
    ],
    [
      'added latency p99 vs direct (ms)',
      '—',
      ms(r.addedLatencyMs.bare?.p99),
      pending(ms(r.addedLatencyMs.gateway?.p99)),
    ],
    [
      'server CPU per request, c=1 (µs, all threads)',
      int(r.cpuPerRequestUs.direct),
      int(r.cpuPerRequestUs.bare),
      pending(int(r.cpuPerRequestUs.gateway)),
    ],
    [
      `requests/s, ${r.settings.throughputConnections} connections, ${r.settings.throughputUpstreamLatencyMs} ms upstream`,
      int(r.throughput.direct?.rps),
      int(r.throughput.bare?.rps),
      pending(int(r.throughput.gateway?.rps)),
    ],
    [
      'requests/s ratio to bare proxy',
      r.throughput.direct && r.throughput.bare
        ? (r.throughput.direct.rps / r.throughput.bare.rps).toFixed(2)
        : PENDING,
      '1.00',
      pending(r.throughput.gatewayToBare?.toFixed(2) ?? PENDING),
    ],
    [
      'latency p99 under that load (ms)',
      int(r.throughput.direct?.latencyP99),
      int(r.throughput.bare?.latencyP99),
      pending(int(r.throughput.gateway?.latencyP99)),
    ],
    [
      'stream time to first byte p50 (ms)',
      ms(r.ttfbMs.direct?.p50),
      ms(r.ttfbMs.bare?.p50),
      pending(ms(r.ttfbMs.gateway?.p50)),
    ],
    [
      'stream time to first byte p99 (ms)',
      ms(r.ttfbMs.direct?.p99),
      ms(r.ttfbMs.bare?.p99),
      pending(ms(r.ttfbMs.gateway?.p99)),
    ],
    [
      'added TTFB p50 vs direct (ms)',
      '—',
      ms(r.addedTtfbMs.bare?.p50),
      pending(ms(r.addedTtfbMs.gateway?.p50)),
    ],
    [
      'added TTFB p99 vs direct (ms)',
      '—',
      ms(r.addedTtfbMs.bare?.p99),
      pending(ms(r.addedTtfbMs.gateway?.p99)),
    ],
    [
      'peak RSS (VmHWM, MB)',
      r.peakRssMB.upstream?.toFixed(1) ?? PENDING,
      r.peakRssMB.bare?.toFixed(1) ?? PENDING,
      pending(r.peakRssMB.gateway?.toFixed(1) ?? PENDING),
    ],
  ];
  const lines = [
    '| metric | direct (fake upstream) | bare Node proxy | gateway |',
    '|---|---:|---:|---:|',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ];
  return lines.join('\n');
}
