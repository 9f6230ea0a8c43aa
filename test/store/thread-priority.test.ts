import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { startSqliteLogThread } from '../../src/store/sqlite-log-thread.js';
import { PriorityGovernor } from '../../src/store/thread-priority.js';

describe('the log thread priority governor', () => {
  const options = { slowAckMs: 250, calmForMs: 10_000 };

  it('starts in the background and stays there while batches are acknowledged promptly', () => {
    const governor = new PriorityGovernor(options);
    expect(governor.priority).toBe('background');
    for (let t = 0; t < 60_000; t += 20) expect(governor.observe(5, t)).toBeUndefined();
  });

  it('moves to normal priority on a slow acknowledgement, and back only after a calm stretch', () => {
    const governor = new PriorityGovernor(options);
    expect(governor.observe(400, 1_000)).toBe('normal');
    expect(governor.observe(300, 2_000)).toBeUndefined(); // still slow: stays normal, the calm restarts
    expect(governor.observe(5, 11_999)).toBeUndefined();
    expect(governor.observe(5, 12_000)).toBe('background');
    expect(governor.priority).toBe('background');
  });

  it('moves to normal priority when another connection waits for its lock, for a calm stretch', () => {
    const governor = new PriorityGovernor(options);
    expect(governor.boost(1_000)).toBe('normal');
    expect(governor.boost(1_500)).toBeUndefined();
    expect(governor.observe(5, 11_000)).toBeUndefined();
    expect(governor.observe(5, 11_500)).toBe('background');
  });

  it('stays at normal priority once held (a stop), however long its answers stay prompt', () => {
    const governor = new PriorityGovernor(options);
    expect(governor.hold(1_000)).toBe('normal');
    for (let t = 1_000; t < 60_000; t += 20) expect(governor.observe(5, t)).toBeUndefined();
    expect(governor.priority).toBe('normal');
    // Held while at normal priority already (a slow answer came first): no calm stretch ends it either.
    const slow = new PriorityGovernor(options);
    expect(slow.observe(400, 1_000)).toBe('normal');
    expect(slow.hold(2_000)).toBeUndefined();
    expect(slow.observe(5, 30_000)).toBeUndefined();
    expect(slow.priority).toBe('normal');
  });
});

/** Scheduling policies of this process's threads (field 41 of /proc/<pid>/task/<tid>/stat). */
function threadPolicies(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[38]);
  });
}

const SCHED_IDLE = 5;

function chrtMissing(): string | undefined {
  if (process.platform !== 'linux') return 'scheduling policies are Linux only';
  try {
    execFileSync('chrt', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'chrt (util-linux) is not installed';
  }
}

const missing = chrtMissing();
if (missing) console.log(`skipping the SCHED_IDLE test: ${missing}`);

describe.skipIf(missing !== undefined)('the SQLite log thread', () => {
  it('runs at idle priority (SCHED_IDLE) while it keeps up', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gateway-log-thread-'));
    const before = threadPolicies().filter((policy) => policy === SCHED_IDLE).length;
    const thread = startSqliteLogThread(path.join(dir, 'gateway.db'));
    try {
      let idle = 0;
      for (let i = 0; i < 100 && idle <= before; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        idle = threadPolicies().filter((policy) => policy === SCHED_IDLE).length;
      }
      expect(idle).toBe(before + 1);
    } finally {
      await thread.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('moves to normal priority while a batch goes unanswered, before any answer says it was late', async () => {
    // On a saturated machine an idle-priority thread gets no core at all, so no late answer ever comes to
    // move it: here the thread waits for the file's write lock instead, and does not answer either.
    const dir = mkdtempSync(path.join(tmpdir(), 'gateway-log-thread-'));
    const file = path.join(dir, 'gateway.db');
    const holder = new BetterSqlite3(file);
    holder.pragma('journal_mode = WAL');
    holder.exec('create table logs (x integer)');
    const idleThreads = () => threadPolicies().filter((policy) => policy === SCHED_IDLE).length;
    const before = idleThreads();
    const thread = startSqliteLogThread(file);
    try {
      for (let i = 0; i < 100 && idleThreads() <= before; i++) await sleep(20);
      expect(idleThreads()).toBe(before + 1);
      holder.exec('begin immediate');
      holder.exec('insert into logs values (0)');
      const inserting = thread.insert('logs', ['x'], [[1]]);
      for (let i = 0; i < 50 && idleThreads() > before; i++) await sleep(20);
      // Still unanswered, and no longer idle.
      expect(idleThreads()).toBe(before);
      holder.exec('commit');
      await inserting;
    } finally {
      if (holder.inTransaction) holder.exec('commit');
      await thread.close();
      holder.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
