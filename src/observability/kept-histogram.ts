/**
 * A Prometheus histogram whose buckets the gateway keeps itself, one plain cell per series (a count per
 * bucket, the sum, the count), and prom-client's registry reads when `/metrics` is scraped. Observing on
 * the path of a call is then a short walk over the bounds and three additions; prom-client's own
 * `observe` validates and hashes the labels every time.
 *
 * prom-client has no way to hand a histogram its buckets, so this is a metric object of the gateway's own
 * in the registry: the registry asks a metric for its name, help, type and, through `get()`, its values —
 * the shape of prom-client's metrics' `get()`, which the registry also reads for any metric that has nothing
 * else — and writes the text. The values are the ones prom-client's `Histogram` gives for the same
 * observations, so the text is the same (`_bucket` lines with `le` first and cumulative counts, `+Inf`,
 * `_sum`, `_count`), which the tests compare.
 */
import { validateMetricName, type Metric, type Registry } from 'prom-client';

/** One series: its observations' count per bucket (the last one past every bound), sum and count. */
export class HistogramCell {
  readonly buckets: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
    /** Called before the first observation (again after a reset): the scrape lists series in that order. */
    private readonly firstObserved: (cell: HistogramCell) => void,
  ) {
    this.buckets = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    // As prom-client: a value that is no number would make the sum meaningless for good.
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    if (this.count === 0) this.firstObserved(this);
    const bounds = this.bounds;
    let bucket = 0;
    while (bucket < bounds.length && value > bounds[bucket]) bucket++;
    this.buckets[bucket] += 1;
    this.sum += value;
    this.count += 1;
  }
}

interface HistogramConfig<T extends string> {
  name: string;
  help: string;
  labelNames: readonly T[];
  /** Upper bounds, ascending. */
  buckets: readonly number[];
}

/** A series' value as prom-client's registry writes it: `{metricName}{labels} {value}`. */
interface SeriesValue {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

export class KeptHistogram<T extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  private readonly labelNames: readonly T[];
  private readonly bounds: readonly number[];
  /** By label values joined with a separator no label value holds. */
  private readonly cells = new Map<string, HistogramCell>();
  /** The cells observed into, in the order of their first observation, as prom-client lists series. */
  private observed: HistogramCell[] = [];
  private readonly addObserved = (cell: HistogramCell) => this.observed.push(cell);

  constructor(registry: Registry, config: HistogramConfig<T>) {
    if (!validateMetricName(config.name)) throw new Error(`Invalid metric name: ${config.name}`);
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames;
    this.bounds = [...config.buckets];
    // The registry reads only what is above; prom-client's types name its own metric classes alone.
    registry.registerMetric(this as unknown as Metric);
  }

  /** The cell of a series, made on first use; a series shows once observed into, as in prom-client. */
  cell(...labelValues: string[]): HistogramCell {
    const key = labelValues.join('\u0000');
    let cell = this.cells.get(key);
    if (cell === undefined) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => (labels[name] = labelValues[i]));
      cell = new HistogramCell(labels, this.bounds, this.addObserved);
      this.cells.set(key, cell);
    }
    return cell;
  }

  /** What the registry writes at a scrape. */
  async get(): Promise<{
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: SeriesValue[];
  }> {
    const values: SeriesValue[] = [];
    for (const cell of this.observed) this.pushSeries(values, cell);
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** Forgets every observation (prom-client's `registry.resetMetrics()`). */
  reset(): void {
    for (const cell of this.observed) {
      cell.buckets.fill(0);
      cell.sum = 0;
      cell.count = 0;
    }
    this.observed = [];
  }

  private pushSeries(values: SeriesValue[], cell: HistogramCell): void {
    const { labels } = cell;
    const bucketName = `${this.name}_bucket`;
    let cumulative = 0;
    this.bounds.forEach((bound, i) => {
      cumulative += cell.buckets[i];
      values.push({ metricName: bucketName, labels: { le: bound, ...labels }, value: cumulative });
    });
    values.push(
      { metricName: bucketName, labels: { le: '+Inf', ...labels }, value: cell.count },
      { metricName: `${this.name}_sum`, labels, value: cell.sum },
      { metricName: `${this.name}_count`, labels, value: cell.count },
    );
  }
}
