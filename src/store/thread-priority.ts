/**
 * Background priority for the log writer's thread. Writing records is work nobody waits for, yet on a
 * small machine it competes for the cores that answer requests: a batch insert that holds a core for half
 * a millisecond makes the request that needs that core wait for it. Under Linux's SCHED_IDLE policy the
 * thread still gets every idle cycle, but a woken request-handling thread takes its core at once.
 *
 * An idle-priority thread can starve when the machine is saturated, and records must never be lost, so
 * the policy is governed by how long the thread takes to answer: a batch acknowledged late moves it back
 * to normal priority, and so does one not acknowledged yet when it is late already (a thread left off the
 * cores sends no late answer either), and only a long stretch of prompt answers moves it to the background
 * again. The
 * thread also holds the SQLite file's write lock while it writes, so a query of the main thread that
 * finds the lock taken moves it to normal priority too (`boost`): otherwise, on a busy machine, the main
 * thread's writes would wait for a thread that only runs when a core is idle.
 *
 * Node has no binding for sched_setscheduler; `chrt` (util-linux) sets the policy of a thread by id.
 * Everything here is best effort: without Linux or `chrt` the thread keeps normal priority.
 */
import { execFile } from 'node:child_process';

export type ThreadPriority = 'background' | 'normal';

/** Sets the scheduling policy of a thread (Linux task id); resolves false when it could not. */
export function setThreadPriority(tid: number, priority: ThreadPriority): Promise<boolean> {
  const policy = priority === 'background' ? '--idle' : '--other';
  return new Promise((resolve) => {
    execFile('chrt', [policy, '-p', '0', String(tid)], { timeout: 2_000 }, (error) => resolve(!error));
  });
}

export interface PriorityGovernorOptions {
  /** An acknowledgement slower than this moves the thread to normal priority. */
  slowAckMs: number;
  /** After moving to normal priority, how long acknowledgements must stay prompt before going back. */
  calmForMs: number;
}

export const DEFAULT_GOVERNOR: PriorityGovernorOptions = { slowAckMs: 250, calmForMs: 10_000 };

/** Decides the thread's priority from how long its batches take to be acknowledged. */
export class PriorityGovernor {
  priority: ThreadPriority = 'background';
  private lastSlowAt = -Infinity;
  /** Held at normal priority for good (a stop waits for the thread until the store is closed). */
  private held = false;

  constructor(private readonly options: PriorityGovernorOptions = DEFAULT_GOVERNOR) {}

  /** Someone waits for the thread (it holds the lock they need): normal priority, so that it is not left
   * off the cores while they wait — a priority inversion. Returns the new priority when it changes. */
  boost(now: number): ThreadPriority | undefined {
    this.lastSlowAt = now;
    if (this.priority === 'background') return (this.priority = 'normal');
    return undefined;
  }

  /** Someone will wait for the thread from now on (a stop: its final writes, then the store's close):
   * normal priority, and no calm stretch moves it back. Returns the new priority when it changes. */
  hold(now: number): ThreadPriority | undefined {
    this.held = true;
    return this.boost(now);
  }

  /** Records one acknowledgement; returns the new priority when it should change. */
  observe(ackMs: number, now: number): ThreadPriority | undefined {
    if (ackMs > this.options.slowAckMs) {
      this.lastSlowAt = now;
      if (this.priority === 'background') return (this.priority = 'normal');
      return undefined;
    }
    if (this.priority === 'normal' && !this.held && now - this.lastSlowAt >= this.options.calmForMs) {
      return (this.priority = 'background');
    }
    return undefined;
  }
}
