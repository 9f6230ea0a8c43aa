/**
 * The gateway's kept histogram against prom-client's own: the same observations scrape to the same text.
 */
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { KeptHistogram } from '../../src/observability/kept-histogram.js';

const LABELS = ['endpoint', 'model', 'status_class'] as const;
const BUCKETS = [0.0001, 0.005, 0.1, 1, 2.5];
const CONFIG = {
  name: 'test_duration_seconds',
  help: 'Time a call took, "quoted" \\ help.',
  buckets: BUCKETS,
};

type Observation = [labels: [string, string, string], value: number];

/** Scrapes of a prom-client Histogram and of a KeptHistogram, fed the same observations. */
async function scrapeBoth(observations: Observation[]): Promise<{ theirs: string; ours: string }> {
  const theirRegistry = new Registry();
  const histogram = new Histogram({ ...CONFIG, labelNames: LABELS, registers: [theirRegistry] });
  const ourRegistry = new Registry();
  const kept = new KeptHistogram(ourRegistry, { ...CONFIG, labelNames: LABELS });
  for (const [labels, value] of observations) {
    histogram.labels(...labels).observe(value);
    kept.cell(...labels).observe(value);
  }
  return { theirs: await theirRegistry.metrics(), ours: await ourRegistry.metrics() };
}

describe('KeptHistogram', () => {
  it('scrapes to the text prom-client writes for the same observations', async () => {
    const chat: [string, string, string] = ['chat', 'gpt-4o', '2xx'];
    const odd: [string, string, string] = ['chat', 'model "x"\\\nnew line', '5xx'];
    const embeddings: [string, string, string] = ['embeddings', 'text-embedding-3-small', '2xx'];
    const { theirs, ours } = await scrapeBoth([
      [chat, 0.0042],
      [odd, 7.5],
      // On a bound: counted in that bound's bucket.
      [chat, 0.005],
      [chat, 0],
      [embeddings, 0.1],
      [chat, 0.30000000000000004],
      [odd, 0.00001],
      [chat, 2.5],
      [chat, 1e-9],
    ]);
    expect(ours).toBe(theirs);
    // And the text is a histogram's: cumulative buckets, le first.
    expect(ours).toContain(
      'test_duration_seconds_bucket{le="0.005",endpoint="chat",model="gpt-4o",status_class="2xx"} 4',
    );
    expect(ours).toContain(
      'test_duration_seconds_bucket{le="+Inf",endpoint="chat",model="gpt-4o",status_class="2xx"} 6',
    );
    expect(ours).toContain('test_duration_seconds_count{endpoint="embeddings",');
  });

  it('shows nothing before an observation, as prom-client does', async () => {
    const theirRegistry = new Registry();
    const histogram = new Histogram({ ...CONFIG, labelNames: LABELS, registers: [theirRegistry] });
    histogram.labels('chat', 'gpt-4o', '2xx');
    const ourRegistry = new Registry();
    new KeptHistogram(ourRegistry, { ...CONFIG, labelNames: LABELS }).cell('chat', 'gpt-4o', '2xx');
    expect(await ourRegistry.metrics()).toBe(await theirRegistry.metrics());
  });

  it('lists series in the order of their first observation, whenever their cell was made', async () => {
    const ourRegistry = new Registry();
    const kept = new KeptHistogram(ourRegistry, { ...CONFIG, labelNames: LABELS });
    const first = kept.cell('chat', 'made-first', '2xx');
    kept.cell('chat', 'observed-first', '2xx').observe(0.2);
    first.observe(0.2);
    const text = await ourRegistry.metrics();
    expect(text.indexOf('observed-first')).toBeLessThan(text.indexOf('made-first'));
    const { theirs } = await scrapeBoth([
      [['chat', 'observed-first', '2xx'], 0.2],
      [['chat', 'made-first', '2xx'], 0.2],
    ]);
    expect(text).toBe(theirs);
  });

  it('gives the same cell for the same labels, and refuses a value that is no number', () => {
    const kept = new KeptHistogram(new Registry(), { ...CONFIG, labelNames: LABELS });
    expect(kept.cell('chat', 'm', '2xx')).toBe(kept.cell('chat', 'm', '2xx'));
    expect(() => kept.cell('chat', 'm', '2xx').observe(Number.NaN)).toThrow(TypeError);
  });

  it('forgets its observations when the registry is reset', async () => {
    const registry = new Registry();
    const kept = new KeptHistogram(registry, { ...CONFIG, labelNames: LABELS });
    kept.cell('chat', 'm', '2xx').observe(0.2);
    registry.resetMetrics();
    expect(await registry.metrics()).not.toContain('_count');
    kept.cell('chat', 'm', '2xx').observe(3);
    const { theirs } = await scrapeBoth([[['chat', 'm', '2xx'], 3]]);
    expect(await registry.metrics()).toBe(theirs);
  });
});
