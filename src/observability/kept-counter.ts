/**
 * A Prometheus counter whose counts the gateway keeps itself, one plain number per series, and prom-client
 * reads when `/metrics` is scraped (through the counter's `collect` hook). Counting on the path of a call is
 * then an addition; prom-client's own `inc` validates and hashes the labels every time.
 */
import { Counter, type Registry } from 'prom-client';

/** One series' count. */
export interface CountCell {
  value: number;
}

export class KeptCounter<T extends string> {
  private readonly cells: Array<{ labels: string[]; cell: CountCell }> = [];

  constructor(registry: Registry, config: { name: string; help: string; labelNames: readonly T[] }) {
    const cells = this.cells;
    new Counter<T>({
      ...config,
      registers: [registry],
      collect() {
        this.reset();
        // Two cells of the same labels (kept by different callers) add up, as prom-client's `inc` does.
        for (const { labels, cell } of cells) if (cell.value > 0) this.labels(...labels).inc(cell.value);
      },
    });
  }

  /** A new cell for a series; the caller keeps it, and a series shows once its count is above zero. */
  cell(...labels: string[]): CountCell {
    const cell = { value: 0 };
    this.cells.push({ labels, cell });
    return cell;
  }
}
