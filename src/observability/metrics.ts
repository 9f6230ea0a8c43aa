/**
 * The gateway's Prometheus metrics (prom-client), served by `GET /metrics`. One registry per gateway (not
 * prom-client's global one), so two gateways in one process, as in the tests, count apart.
 *
 * Labels are bounded: each label takes at most `MAX_LABEL_VALUES` distinct values per process, later ones
 * are counted under `other`. A label value comes from what the gateway resolved (a provider id, a
 * workspace id, the model a target named), never from free text, but a caller can still name endless
 * models; the bound keeps a scrape's size and Prometheus's series count in check whatever they send.
 *
 * Recording is on the path of every call: each metric keeps the children (prom-client's per-label-set
 * handles) it has made, so a call does not make and validate a new one per metric. prom-client still
 * hashes the labels of every observation; that is most of what metrics cost a call (docs/benchmarks.md).
 */
import { collectDefaultMetrics, Counter, Histogram, Registry, type Metric } from 'prom-client';

/** Distinct values one label may take in one process before the rest are counted as `other`. */
export const MAX_LABEL_VALUES = 500;
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

/** A label's values, at most MAX_LABEL_VALUES of them. */
class BoundedLabel {
  private readonly seen = new Set<string>();

  value(raw: string | null | undefined): string {
    if (raw === null || raw === undefined || raw === '') return 'none';
    if (this.seen.has(raw)) return raw;
    if (this.seen.size >= MAX_LABEL_VALUES) return OTHER_LABEL_VALUE;
    this.seen.add(raw);
    return raw;
  }
}

/** A metric's children by label set, joined with a separator no label value holds after bounding. */
class Children<C> {
  private readonly byKey = new Map<string, C>();

  constructor(private readonly make: (values: string[]) => C) {}

  get(values: string[]): C {
    const key = values.join('\u0000');
    let child = this.byKey.get(key);
    if (child === undefined) {
      child = this.make(values);
      this.byKey.set(key, child);
    }
    return child;
  }
}

function counterChildren<T extends string>(counter: Counter<T>): Children<Counter.Internal> {
  return new Children((values) => counter.labels(...values));
}

function histogramChildren<T extends string>(histogram: Histogram<T>): Children<Histogram.Internal<T>> {
  return new Children((values) => histogram.labels(...values));
}

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
  private readonly requests: Children<Counter.Internal>;
  private readonly errors: Children<Counter.Internal>;
  private readonly duration: Children<Histogram.Internal<CallLabelName>>;
  private readonly ttfb: Children<Histogram.Internal<CallLabelName>>;
  private readonly upstream: Children<Histogram.Internal<CallLabelName>>;
  private readonly overhead: Children<Histogram.Internal<CallLabelName>>;
  private readonly tokens: Children<Counter.Internal>;
  private readonly cost: Children<Counter.Internal>;
  private readonly cache: Children<Counter.Internal>;
  private readonly retries: Children<Counter.Internal>;
  private readonly fallbacks: Children<Counter.Internal>;
  private readonly hooks: Children<Counter.Internal>;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registry = this.registry;
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
    const counter = <T extends string>(name: string, help: string, labelNames: readonly T[]) =>
      new Counter<T>({ name, help, labelNames, registers: [registry] });
    const histogram = <T extends string>(
      name: string,
      help: string,
      labelNames: readonly T[],
      buckets: number[],
    ) => new Histogram<T>({ name, help, labelNames, buckets, registers: [registry] });

    this.requests = counterChildren(
      counter('gateway_requests_total', 'Calls answered, by outcome status class.', CALL_LABELS),
    );
    this.errors = counterChildren(
      counter('gateway_errors_total', 'Calls that failed, by error code.', [...CALL_LABELS, 'code']),
    );
    this.duration = histogramChildren(
      histogram(
        'gateway_request_duration_seconds',
        'Time from a request to the end of its answer.',
        CALL_LABELS,
        LATENCY_BUCKETS,
      ),
    );
    this.ttfb = histogramChildren(
      histogram(
        'gateway_time_to_first_byte_seconds',
        'Streams: time from a request to its first byte.',
        CALL_LABELS,
        LATENCY_BUCKETS,
      ),
    );
    this.upstream = histogramChildren(
      histogram(
        'gateway_upstream_duration_seconds',
        'Time spent waiting on providers for one call, all its attempts together.',
        CALL_LABELS,
        LATENCY_BUCKETS,
      ),
    );
    this.overhead = histogramChildren(
      histogram(
        'gateway_overhead_seconds',
        "The gateway's own time in a call: its duration less the time spent waiting on providers.",
        CALL_LABELS,
        OVERHEAD_BUCKETS,
      ),
    );
    this.tokens = counterChildren(
      counter('gateway_tokens_total', 'Tokens reported by providers, by type.', [...TARGET_LABELS, 'type']),
    );
    this.cost = counterChildren(
      counter(
        'gateway_cost_usd_total',
        'What calls cost in US dollars, priced from their usage (calls of unpriced models are left out).',
        TARGET_LABELS,
      ),
    );
    this.cache = counterChildren(
      counter('gateway_cache_results_total', 'Cache lookups, by result.', [
        'endpoint',
        'workspace',
        'result',
      ]),
    );
    this.retries = counterChildren(
      counter('gateway_retries_total', 'Retries made (on any target).', ['endpoint', 'workspace']),
    );
    this.fallbacks = counterChildren(
      counter('gateway_fallbacks_total', 'Moves to another target after one failed.', [
        'endpoint',
        'workspace',
      ]),
    );
    this.hooks = counterChildren(
      counter('gateway_hooks_total', 'Hook runs, by event and outcome.', ['event', 'outcome']),
    );
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
      status_class: this.labels.status_class.value(`${Math.floor(raw.status / 100)}xx`),
    };
  }

  recordCall(call: CallMeasures): void {
    const { labels } = call;
    const values = [labels.endpoint, labels.provider, labels.model, labels.workspace, labels.status_class];
    this.requests.get(values).inc();
    this.duration.get(values).observe(call.durationSeconds);
    if (call.ttfbSeconds !== null) this.ttfb.get(values).observe(call.ttfbSeconds);
    if (call.upstreamSeconds !== null) {
      this.upstream.get(values).observe(call.upstreamSeconds);
      this.overhead.get(values).observe(Math.max(0, call.durationSeconds - call.upstreamSeconds));
    }
    if (call.errorCode !== null) this.errors.get([...values, this.errorCodes.value(call.errorCode)]).inc();
    if (call.tokens) {
      const target = [labels.endpoint, labels.provider, labels.model, labels.workspace];
      for (const type of ['prompt', 'completion', 'cached', 'reasoning'] as const) {
        const count = call.tokens[type];
        if (count > 0) this.tokens.get([...target, type]).inc(count);
      }
    }
    if (call.costDollars !== null && call.costDollars > 0) {
      this.cost.get([labels.endpoint, labels.provider, labels.model, labels.workspace]).inc(call.costDollars);
    }
    const scope = [labels.endpoint, labels.workspace];
    if (call.cacheStatus !== null) this.cache.get([...scope, call.cacheStatus.toLowerCase()]).inc();
    if (call.retries > 0) this.retries.get(scope).inc(call.retries);
    if (call.fallbacks > 0) this.fallbacks.get(scope).inc(call.fallbacks);
  }

  recordHook(hook: HookMeasure): void {
    this.hooks.get([hook.event, hook.outcome]).inc();
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
