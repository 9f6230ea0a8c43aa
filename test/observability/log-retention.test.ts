import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startLogRetention } from '../../src/observability/log-retention.js';
import { openStore } from '../../src/store/index.js';
import type { LogRecord, Store } from '../../src/store/types.js';
import { logRecord } from '../store/store-contract.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 23);

let store: Store | undefined;

afterEach(async () => {
  await store?.close();
  store = undefined;
});

function record(createdAtMs: number, i: number): LogRecord {
  return logRecord('ws', { id: `log_retention_${i}`, created_at_ms: createdAtMs });
}

describe('log retention on a real SQLite store', () => {
  it('deletes every record past the age in batches, and keeps the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-retention-'));
    store = await openStore({ dataDir: dir, masterKey: randomBytes(32) });
    // 25 records 31-55 days old, 5 records within the last 29 days.
    const old = Array.from({ length: 25 }, (_, i) => record(NOW - (31 + i) * DAY, i));
    const recent = Array.from({ length: 5 }, (_, i) => record(NOW - (29 - i) * DAY, 100 + i));
    await store.insertLogs([...old, ...recent]);

    const deletes: number[] = [];
    const counting = {
      deleteLogsBefore: async (cutoff: number, limit: number) => {
        const count = await (store as Store).deleteLogsBefore(cutoff, limit);
        deletes.push(count);
        return count;
      },
    };
    const retention = startLogRetention(counting, pino({ level: 'silent' }), {
      maxAgeMs: 30 * DAY,
      intervalMs: 3_600_000,
      batchSize: 10,
      maxBatchesPerSweep: 100,
      pauseMs: 1,
      now: () => NOW,
    });
    try {
      expect(await retention.sweep()).toBe(25);
      // Bounded batches: 10, 10, 5 (a short batch ends the sweep).
      expect(deletes).toEqual([10, 10, 5]);
      const left = await store.listLogs({ workspace_id: 'ws', limit: 100 });
      expect(left.data.map((r) => r.id).sort()).toEqual(recent.map((r) => r.id).sort());
      expect(await retention.sweep()).toBe(0);
    } finally {
      await retention.close();
    }
  });
});
