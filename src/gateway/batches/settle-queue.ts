/**
 * Commits batch lines' results in groups: the results that come in during one turn of the event loop
 * are written per batch in one transaction (`BatchRepository.settleLines`). Lines claimed together end
 * together, so a batch running 16 lines at once makes a few commits for them, not 16, and the file's
 * write lock (SQLite) or the batch's row (PostgreSQL, whose counts every commit updates) is taken less.
 */
import type { BatchRepository, SettledLine } from '../../store/file-batch-types.js';

interface Waiting {
  line: number;
  settled: SettledLine;
  resolve: (committed: boolean) => void;
  reject: (err: unknown) => void;
}

export interface SettleQueue {
  /** Resolves once the result is committed: true, or false when `owner` no longer held the line. */
  settle(batchId: string, line: number, settled: SettledLine): Promise<boolean>;
}

export function createSettleQueue(batches: BatchRepository, owner: string): SettleQueue {
  let waiting = new Map<string, Waiting[]>();
  let scheduled = false;

  async function commit(batchId: string, group: Waiting[]): Promise<void> {
    try {
      const committed = await batches.settleLines(batchId, owner, group);
      for (const item of group) item.resolve(committed.has(item.line));
    } catch (err) {
      for (const item of group) item.reject(err);
    }
  }

  function flush(): void {
    scheduled = false;
    const groups = waiting;
    waiting = new Map();
    for (const [batchId, group] of groups) void commit(batchId, group);
  }

  return {
    settle(batchId, line, settled) {
      return new Promise((resolve, reject) => {
        let group = waiting.get(batchId);
        if (!group) {
          group = [];
          waiting.set(batchId, group);
        }
        group.push({ line, settled, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}
