/**
 * Store.destroy, for a stop whose close of the store did not end in time (stop-closes.ts): it ends at once
 * what the close waits for, and leaves nothing of the store open in a process that goes on.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';

const threads = () => readdirSync('/proc/self/task').length;

describe('Store.destroy on SQLite', () => {
  it('stops the log thread and closes the main connection', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gateway-store-destroy-'));
    const before = threads();
    const store = await openStore({ dataDir: dir, masterKey: randomBytes(32) });
    try {
      expect(await store.listWorkspaces('org')).toBeDefined();
      store.destroy();
      for (let i = 0; i < 100 && threads() > before; i++) await sleep(20);
      expect(threads()).toBeLessThanOrEqual(before);
      await expect(store.listWorkspaces('org')).rejects.toThrow(/destroyed|not open/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
