/**
 * A node's stop as the work it serves sees it: `stopping` from its start (a request arriving then is
 * refused), `signal` aborted when the stop cuts what still runs
 * (stop-plan.ts), and work that holds something in the store for other nodes (the claim on a file's upload
 * to a provider) is `held`, so that the stop waits for it to give that back before it closes the store.
 */
import { CallAbort, type AbortSignalLike } from '../core/abort.js';

export class NodeStop {
  private readonly cutting = new CallAbort();
  private readonly held = new Set<Promise<unknown>>();
  private began = false;

  /** The stop has begun. */
  get stopping(): boolean {
    return this.began;
  }

  begin(): void {
    this.began = true;
  }

  /** Aborted when the stop cuts what still runs. */
  get signal(): AbortSignalLike {
    return this.cutting;
  }

  /** `work`, which the stop waits for once it has cut it. */
  hold<T>(work: Promise<T>): Promise<T> {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.held.add(settled);
    void settled.then(() => this.held.delete(settled));
    return work;
  }

  cut(): void {
    this.cutting.abort();
  }

  /** Resolves once nothing is held. */
  async settled(): Promise<void> {
    while (this.held.size > 0) await Promise.all([...this.held]);
  }
}
