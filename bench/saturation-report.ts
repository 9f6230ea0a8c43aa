// Saturation mode's report: the JSON kept in bench/results/ and the markdown table printed at the end.
import type { MachineInfo } from './report.js';
import type { Distribution } from './stats.js';

type Per<T> = { direct?: T; bare?: T; gateway?: T };

/** One wrk round against one server, with the CPU its process and each core used meanwhile. */
export interface SaturationRound {
  round: number;
  target: 'bare' | 'gateway';
  rps: number;
  total: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  non2xx: number;
  errors: number;
  /** CPU time of the server process (all threads) over the round's wall time, in % of one core. */
  serverCpuPct: number;
  cpuPerRequestUs: number;
  /** Non-idle share of each core over the round (core 0: load generator + fake upstream; core 1: server). */
  core0BusyPct: number;
  core1BusyPct: number;
  /** Kernel network work (loopback) on core 1: busy, but charged to no process. */
  core1SoftirqPct: number;
}

export type RoundMedians = Omit<SaturationRound, 'round' | 'target' | 'total'>;

export interface SaturationReport {
  date: string;
  mode: 'saturation' | 'saturation-quick';
  machine: MachineInfo;
  /** 1-minute load average when the run began: well above 0 means other work shared the cores. */
  loadAverageBefore: number;
  settings: {
    connections: number;
    upstreamLatencyMs: number;
    rounds: number;
    /** Fresh pairs of servers, `rounds` rounds each, pooled. */
    generations: number;
    roundDurationS: number;
    warmupS: number;
    loadGenerator: string;
    serverCore: string;
    loadCore: string;
    latencyRequests: number;
    ttfbRequests: number;
    gatewayHeaders: 'provider' | 'config';
    gatewayConfig?: string;
    redis?: boolean;
    rateLimitPolicies?: Record<string, unknown>[];
  };
  rounds: SaturationRound[];
  /** Per target, the median of each field over its rounds. */
  median: { bare?: RoundMedians; gateway?: RoundMedians };
  gatewayToBare?: number;
  /** Whether the bare proxy used its whole core (else the ratio says less than it seems). */
  bareSaturation: { verdict: 'cpu-bound' | 'core-shared' | 'not-cpu-bound' | 'unknown'; detail: string };
  /** Concurrency 1, 0 ms upstream, same pinning. */
  latencyMs: Per<Distribution>;
  ttfbMs: Per<Distribution>;
  beyondBareMs?: { p50: number; p99: number };
  beyondBareTtfbMs?: { p50: number; p99: number };
  peakRssMB: { upstream?: number; bare?: number; gateway?: number };
  gateway: { status: 'measured' | 'failed' | 'skipped'; reason?: string };
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0
    ? NaN
    : s.length % 2
      ? s[(s.length - 1) / 2]
      : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export function medians(rounds: SaturationRound[]): RoundMedians | undefined {
  if (rounds.length === 0) return undefined;
  const m = (key: keyof RoundMedians) => median(rounds.map((r) => r[key]));
  return {
    rps: m('rps'),
    latencyP50Ms: m('latencyP50Ms'),
    latencyP99Ms: m('latencyP99Ms'),
    non2xx: m('non2xx'),
    errors: m('errors'),
    serverCpuPct: m('serverCpuPct'),
    cpuPerRequestUs: m('cpuPerRequestUs'),
    core0BusyPct: m('core0BusyPct'),
    core1BusyPct: m('core1BusyPct'),
    core1SoftirqPct: m('core1SoftirqPct'),
  };
}

/** The server process must hold its core: loopback softirq (~10 %) is charged to the core, not to it. */
const CPU_BOUND_PCT = 85;
const CORE_FULL_PCT = 95;
const LOAD_CORE_BUSY_PCT = 90;
const pct = (x: number) => `${x.toFixed(0)} %`;

export function judgeSaturation(bare?: RoundMedians): SaturationReport['bareSaturation'] {
  if (!bare || Number.isNaN(bare.serverCpuPct)) return { verdict: 'unknown', detail: 'no CPU figures' };
  const others = bare.core1BusyPct - bare.serverCpuPct - bare.core1SoftirqPct;
  const figures =
    `bare proxy at ${pct(bare.serverCpuPct)} of core 1; core 1 busy ${pct(bare.core1BusyPct)} ` +
    `(softirq ${pct(bare.core1SoftirqPct)}, other processes ${pct(Math.max(0, others))}); ` +
    `core 0 (wrk, fake upstream) busy ${pct(bare.core0BusyPct)}`;
  const loadCore =
    bare.core0BusyPct >= LOAD_CORE_BUSY_PCT
      ? '; core 0 was (nearly) full, so the load side may have held the bare proxy back'
      : '';
  if (bare.serverCpuPct >= CPU_BOUND_PCT) return { verdict: 'cpu-bound', detail: `${figures}${loadCore}` };
  if (bare.core1BusyPct >= CORE_FULL_PCT)
    return {
      verdict: 'core-shared',
      detail: `${figures}: core 1 was full, but other processes took part of it${loadCore}`,
    };
  return { verdict: 'not-cpu-bound', detail: `${figures}: the bare proxy did not use its core${loadCore}` };
}

const PENDING = 'pending';
const num = (x: number | undefined, digits: number) =>
  x === undefined || Number.isNaN(x)
    ? PENDING
    : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const signed = (x: number | undefined, digits: number) =>
  x === undefined || Number.isNaN(x) ? PENDING : `${x >= 0 ? '+' : ''}${num(x, digits)}`;

export function saturationTable(r: SaturationReport): string {
  const measured = r.gateway.status === 'measured';
  const g = (v: string) => (measured ? v : PENDING);
  const { bare, gateway } = r.median;
  const diff = (a?: number, b?: number) => (a === undefined || b === undefined ? undefined : a - b);
  /** A figure of the loaded servers only (the fake upstream is not loaded on its own in this mode). */
  const loaded = (label: string, digits: number, key: keyof RoundMedians, vs: 'diff' | 'none'): string[] => [
    label,
    '—',
    num(bare?.[key], digits),
    g(num(gateway?.[key], digits)),
    vs === 'diff' ? g(signed(diff(gateway?.[key], bare?.[key]), digits)) : '—',
  ];
  /** A concurrency-1 figure of all three, with the gateway's excess over the bare proxy. */
  const c1 = (label: string, d: Per<Distribution>, q: 'p50' | 'p99'): string[] => [
    label,
    num(d.direct?.[q], 3),
    num(d.bare?.[q], 3),
    g(num(d.gateway?.[q], 3)),
    g(signed(diff(d.gateway?.[q], d.bare?.[q]), 3)),
  ];
  const rows: string[][] = [
    [
      `requests/s, ${r.settings.connections} connections, ${r.settings.upstreamLatencyMs} ms upstream (median of ${r.settings.rounds * (r.settings.generations ?? 1)})`,
      '—',
      num(bare?.rps, 0),
      g(num(gateway?.rps, 0)),
      g(r.gatewayToBare === undefined ? PENDING : `${r.gatewayToBare.toFixed(2)}×`),
    ],
    loaded('server CPU per request at saturation (µs, all threads)', 0, 'cpuPerRequestUs', 'diff'),
    loaded('server CPU use at saturation (% of one core)', 0, 'serverCpuPct', 'none'),
    loaded('latency p50 under that load (ms, wrk)', 1, 'latencyP50Ms', 'diff'),
    loaded('latency p99 under that load (ms, wrk)', 1, 'latencyP99Ms', 'diff'),
    c1('latency p50, c=1, 0 ms upstream (ms)', r.latencyMs, 'p50'),
    c1('latency p99, c=1, 0 ms upstream (ms)', r.latencyMs, 'p99'),
    c1('stream time to first byte p50, c=1 (ms)', r.ttfbMs, 'p50'),
    c1('stream time to first byte p99, c=1 (ms)', r.ttfbMs, 'p99'),
    [
      'peak RSS (VmHWM, MB)',
      num(r.peakRssMB.upstream, 1),
      num(r.peakRssMB.bare, 1),
      g(num(r.peakRssMB.gateway, 1)),
      g(signed(diff(r.peakRssMB.gateway, r.peakRssMB.bare), 1)),
    ],
  ];
  return [
    '| metric | direct (fake upstream) | bare Node proxy | gateway | gateway vs bare |',
    '|---|---:|---:|---:|---:|',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}
