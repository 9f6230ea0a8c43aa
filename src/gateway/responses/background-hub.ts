/**
 * One node's shortcut for its background responses (background.ts): a follower of a response's events on
 * the node that runs it hears of new ones at once, and a cancel taken on that node reaches the call at
 * once. From another node both are seen by reading the store.
 */
/** One node's background responses: who waits for a response's events, and the calls it runs. */
export class BackgroundHub {
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly calls = new Map<string, () => void>();
  /** Set by the node's worker: look for jobs now. */
  onQueued: () => void = () => undefined;

  /** New events of the response are in the store. */
  notify(id: string): void {
    const waiting = this.waiters.get(id);
    if (!waiting) return;
    this.waiters.delete(id);
    for (const wake of waiting) wake();
  }

  /** Resolves when the response's events change on this node, or after `ms`. */
  wait(id: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let waiting = this.waiters.get(id);
      if (!waiting) {
        waiting = new Set();
        this.waiters.set(id, waiting);
      }
      const set = waiting;
      const wake = () => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && this.waiters.get(id) === set) this.waiters.delete(id);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      timer.unref();
      set.add(wake);
    });
  }

  /** The response runs here: `stop` ends its call and what it writes. Returns the end of that. */
  running(id: string, stop: () => void): () => void {
    this.calls.set(id, stop);
    return () => {
      if (this.calls.get(id) === stop) this.calls.delete(id);
    };
  }

  /** Stops the response's call if this node runs it. */
  cancel(id: string): void {
    this.calls.get(id)?.();
  }
}
