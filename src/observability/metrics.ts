/**
 * The gateway's Prometheus metrics (prom-client), served by `GET /metrics`. One registry per gateway (not
 * prom-client's global one), so two gateways in one process, as in the tests, count apart.
 *
 * Labels are bounded: each label takes at most `MAX_LABEL_VALUES` distinct values per process, later ones
 * (and any longer than `MAX_LABEL_LENGTH`) are counted under `other`. A label value comes from what the
 * gateway resolved (a provider id, a workspace id, the model a target named), never from free text, but a
 * caller can still name endless models, of any length; the bounds keep a scrape's size and Prometheus's
 * series count in check whatever they send.
 *
 * Recording is on the path of every call: the cells (one series' count or buckets) of every metric a call
 * touches are made once per distinct set of call labels and kept together (`CallSeries`), so a call finds
 * all of them by its labels' values, with no key or label list made for it. The counters'
 * counts and the histograms' buckets are plain numbers the gateway keeps and prom-client reads at each
 * scrape (kept-counter.ts, kept-histogram.ts): recording a call hashes no labels (docs/benchmarks.md).
 */
import { collectDefaultMetrics, Counter, Registry, type Metric } from 'prom-client';
import { KeptCounter, type CountCell } from './kept-counter.js';
import { KeptHistogram, type HistogramCell } from './kept-histogram.js';

/** Distinct values one label may take in one process before the rest are counted as `other`. */
export const MAX_LABEL_VALUES = 500;
/**
 * Longer values are counted as `other` too: a label value is written on every line of every series that
 * carries it, at every scrape, and a request's model may be megabytes long.
 */
export const MAX_LABEL_LENGTH = 256;
export const OTHER_LABEL_VALUE = 'other';

/** Seconds. Gateway overhead is sub-millisecond; calls to models take seconds. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25];

/** The labels of a call's metrics, each already bounded. */
export interface CallLabels {
  endpoint: string;
  provider: string;
  model: string;
  workspace: string;
  /** `2xx`, `4xx`, `5xx` … */
  status_class: string;
}

type CallLabelName = keyof CallLabels;
const CALL_LABELS: CallLabelName[] = ['endpoint', 'provider', 'model', 'workspace', 'status_class'];
const TARGET_LABELS = ['endpoint', 'provider', 'model', 'workspace'] as const;

/** A label's values, at most MAX_LABEL_VALUES of them, each at most MAX_LABEL_LENGTH long. */
class BoundedLabel {
  private readonly seen = new Set<string>();

  value(raw: string | null | undefined): string {
    if (raw === null || raw === undefined || raw === '') return 'none';
    if (this.seen.has(raw)) return raw;
    if (this.seen.size >= MAX_LABEL_VALUES || raw.length > MAX_LABEL_LENGTH) return OTHER_LABEL_VALUE;
    this.seen.add(raw);
    return raw;
  }
}

const TOKEN_TYPES = ['prompt', 'completion', 'cached', 'reasoning'] as const;

/** Cells made on first use, by one more label's value (a token type, a cache result, an error code). */
class ChildrenBy<C> {
  private readonly byValue = new Map<string, C>();

  constructor(private readonly make: (value: string) => C) {}

  get(value: string): C {
    let child = this.byValue.get(value);
    if (child === undefined) {
      child = this.make(value);
      this.byValue.set(value, child);
    }
    return child;
  }
}

/** The map under `value` in `map`, made the first time. */
function level(map: Map<string, unknown>, value: string): Map<string, unknown> {
  let next = map.get(value) as Map<string, unknown> | undefined;
  if (next === undefined) map.set(value, (next = new Map()));
  return next;
}

/** The cells of every metric a call with these labels touches. */
interface CallSeries {
  requests: CountCell;
  duration: HistogramCell;
  ttfb: HistogramCell;
  upstream: HistogramCell;
  overhead: HistogramCell;
  errors: ChildrenBy<CountCell>;
  tokens: ChildrenBy<CountCell>;
  cost: CountCell;
  cache: ChildrenBy<CountCell>;
  retries: CountCell;
  fallbacks: CountCell;
}

/** `2xx` … for each hundred, made once. */
const STATUS_CLASSES = Array.from({ length: 10 }, (_, hundred) => `${hundred}xx`);

export interface CallMeasures {
  labels: CallLabels;
  /** Seconds from the request's arrival to the end of its answer. */
  durationSeconds: number;
  /** Streams: seconds to the first byte sent. */
  ttfbSeconds: number | null;
  /** Seconds spent waiting on providers (every attempt together); null when no provider was called. */
  upstreamSeconds: number | null;
  tokens: { prompt: number; completion: number; cached: number; reasoning: number } | undefined;
  /** US dollars the call cost (docs/cost.md); null when unknown. */
  costDollars: number | null;
  /** `HIT`, `MISS`, `REFRESH` when the config has a cache; null otherwise. */
  cacheStatus: string | null;
  retries: number;
  /** Targets tried after the first one failed. */
  fallbacks: number;
  /** The error's code, for failed calls. */
  errorCode: string | null;
}

export interface HookMeasure {
  event: string;
  /** `passed`, `failed` or `denied`. */
  outcome: string;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly labels: Record<CallLabelName, BoundedLabel> = {
    endpoint: new BoundedLabel(),
    provider: new BoundedLabel(),
    model: new BoundedLabel(),
    workspace: new BoundedLabel(),
    status_class: new BoundedLabel(),
  };
  private readonly errorCodes = new BoundedLabel();
  /** By the call's labels' values, one map per label in CALL_LABELS' order (the last one's values hold
   * the series): a call finds its series with no key made for it. */
  private readonly series = new Map<string, unknown>();
  private readonly makeSeries: (labels: CallLabels) => CallSeries;
  private readonly hooks: ChildrenBy<CountCell>;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registry = this.registry;
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
    // The counts and buckets of calls are kept by the gateway (kept-counter.ts, kept-histogram.ts).
    const counter = <T extends string>(name: string, help: string, labelNames: readonly T[]) =>
      new KeptCounter<T>(registry, { name, help, labelNames });
    const histogram = <T extends string>(
      name: string,
      help: string,
      labelNames: readonly T[],
      buckets: number[],
    ) => new KeptHistogram<T>(registry, { name, help, labelNames, buckets });

    const requests = counter(
      'gateway_requests_total',
      'Calls answered, by outcome status class.',
      CALL_LABELS,
    );
    const errors = counter('gateway_errors_total', 'Calls that failed, by error code.', [
      ...CALL_LABELS,
      'code',
    ]);
    const duration = histogram(
      'gateway_request_duration_seconds',
      'Time from a request to the end of its answer.',
      CALL_LABELS,
      LATENCY_BUCKETS,
    );
    const ttfb = histogram(
      'gateway_time_to_first_byte_seconds',
      'Streams: time from a request to its first byte.',
      CALL_LABELS,
      LATENCY_BUCKETS,
    );
    const upstream = histogram(
      'gateway_upstream_duration_seconds',
      'Time spent waiting on providers for one call, all its attempts together.',
      CALL_LABELS,
      LATENCY_BUCKETS,
    );
    const overhead = histogram(
      'gateway_overhead_seconds',
      "The gateway's own time in a call: its duration less the time spent waiting on providers.",
      CALL_LABELS,
      OVERHEAD_BUCKETS,
    );
    const tokens = counter('gateway_tokens_total', 'Tokens reported by providers, by type.', [
      ...TARGET_LABELS,
      'type',
    ]);
    const cost = counter(
      'gateway_cost_usd_total',
      'What calls cost in US dollars, priced from their usage (calls of unpriced models are left out).',
      TARGET_LABELS,
    );
    const cache = counter('gateway_cache_results_total', 'Cache lookups, by result.', [
      'endpoint',
      'workspace',
      'result',
    ]);
    const retries = counter('gateway_retries_total', 'Retries made (on any target).', [
      'endpoint',
      'workspace',
    ]);
    const fallbacks = counter('gateway_fallbacks_total', 'Moves to another target after one failed.', [
      'endpoint',
      'workspace',
    ]);
    const hooks = counter('gateway_hooks_total', 'Hook runs, by event and outcome.', ['event', 'outcome']);
    this.hooks = new ChildrenBy((key) => hooks.cell(...key.split('\u0000')));

    // No series shows until it is counted or observed into.
    this.makeSeries = ({ endpoint, provider, model, workspace, status_class }) => ({
      requests: requests.cell(endpoint, provider, model, workspace, status_class),
      duration: duration.cell(endpoint, provider, model, workspace, status_class),
      ttfb: ttfb.cell(endpoint, provider, model, workspace, status_class),
      upstream: upstream.cell(endpoint, provider, model, workspace, status_class),
      overhead: overhead.cell(endpoint, provider, model, workspace, status_class),
      errors: new ChildrenBy((code) => errors.cell(endpoint, provider, model, workspace, status_class, code)),
      tokens: new ChildrenBy((type) => tokens.cell(endpoint, provider, model, workspace, type)),
      cost: cost.cell(endpoint, provider, model, workspace),
      cache: new ChildrenBy((result) => cache.cell(endpoint, workspace, result)),
      retries: retries.cell(endpoint, workspace),
      fallbacks: fallbacks.cell(endpoint, workspace),
    });
  }

  /** The labels of a call, bounded. */
  callLabels(raw: {
    endpoint: string;
    provider: string | null;
    model: string | null;
    workspace: string | null;
    status: number;
  }): CallLabels {
    return {
      endpoint: this.labels.endpoint.value(raw.endpoint),
      provider: this.labels.provider.value(raw.provider),
      model: this.labels.model.value(raw.model),
      workspace: this.labels.workspace.value(raw.workspace),
      status_class: this.labels.status_class.value(
        STATUS_CLASSES[Math.floor(raw.status / 100)] ?? `${Math.floor(raw.status / 100)}xx`,
      ),
    };
  }

  recordCall(call: CallMeasures): void {
    const series = this.seriesOf(call.labels);
    series.requests.value += 1;
    series.duration.observe(call.durationSeconds);
    if (call.ttfbSeconds !== null) series.ttfb.observe(call.ttfbSeconds);
    if (call.upstreamSeconds !== null) {
      series.upstream.observe(call.upstreamSeconds);
      series.overhead.observe(Math.max(0, call.durationSeconds - call.upstreamSeconds));
    }
    if (call.errorCode !== null) series.errors.get(this.errorCodes.value(call.errorCode)).value += 1;
    if (call.tokens) {
      for (const type of TOKEN_TYPES) {
        const count = call.tokens[type];
        if (count > 0) series.tokens.get(type).value += count;
      }
    }
    if (call.costDollars !== null && call.costDollars > 0) series.cost.value += call.costDollars;
    if (call.cacheStatus !== null) series.cache.get(call.cacheStatus.toLowerCase()).value += 1;
    if (call.retries > 0) series.retries.value += call.retries;
    if (call.fallbacks > 0) series.fallbacks.value += call.fallbacks;
  }

  recordHook(hook: HookMeasure): void {
    this.hooks.get(`${hook.event}\u0000${hook.outcome}`).value += 1;
  }

  private seriesOf(labels: CallLabels): CallSeries {
    const byModel = level(level(this.series, labels.endpoint), labels.provider);
    const byStatusClass = level(level(byModel, labels.model), labels.workspace);
    let series = byStatusClass.get(labels.status_class) as CallSeries | undefined;
    if (series === undefined) {
      series = this.makeSeries(labels);
      byStatusClass.set(labels.status_class, series);
    }
    return series;
  }

  /** Adds a metric of another part of the gateway to this registry. */
  register(metric: Metric): void {
    this.registry.registerMetric(metric);
  }

  /**
   * A counter whose counts another part of the gateway keeps (since start, never decreasing), read at each
   * scrape: one series per key of what `read` answers, under `label`.
   */
  countsFrom(name: string, help: string, label: string, read: () => Record<string, number>): void {
    new Counter({
      name,
      help,
      labelNames: [label],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [key, count] of Object.entries(read())) this.labels(key).inc(count);
      },
    });
  }

  /** The text exposition, and its content type. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
