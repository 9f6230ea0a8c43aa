/**
 * A stop waits for the SQLite log thread (its final writes, then the store's close), which runs at idle
 * priority while it keeps up (store/thread-priority.ts): from the stop's start it runs at normal priority,
 * so that on a saturated machine the final writes are not left waiting for an idle core.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import { CHAT_BODY, providerHeaders } from './support.js';

const SCHED_IDLE = 5;

/** Scheduling policies of this process's threads (field 41 of /proc/<pid>/task/<tid>/stat). */
function idleThreads(): number {
  return readdirSync('/proc/self/task').filter((tid) => {
    const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[38]) === SCHED_IDLE;
  }).length;
}

function chrtMissing(): boolean {
  if (process.platform !== 'linux') return true;
  try {
    execFileSync('chrt', ['--version'], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
}

describe.skipIf(chrtMissing())('a stop and the SQLite log thread', () => {
  let silent: http.Server;
  let silentUrl: string;

  beforeAll(async () => {
    // Takes every request and never answers it: the call holds the stop until its cut.
    silent = http.createServer((request) => void request.resume());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}/v1`;
  });
  afterAll(async () => {
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('raises the log thread to normal priority from the stop’s start', async () => {
    const before = idleThreads();
    const gateway = await startGateway({ env: { GATEWAY_SHUTDOWN_GRACE_MS: '3000' } });
    try {
      for (let i = 0; i < 100 && idleThreads() <= before; i++) await sleep(20);
      expect(idleThreads()).toBe(before + 1);
      const call = fetch(`${gateway.url}/chat/completions`, {
        method: 'POST',
        headers: providerHeaders(gateway, silentUrl, { 'content-type': 'application/json' }),
        body: JSON.stringify(CHAT_BODY),
      }).catch(() => undefined);
      await sleep(200);
      const stopping = gateway.server.close();
      // Before the cut (2.4 s), with nothing written meanwhile.
      for (let i = 0; i < 50 && idleThreads() > before; i++) await sleep(20);
      expect(idleThreads()).toBe(before);
      await stopping;
      await call;
    } finally {
      await gateway.server.close();
      rmSync(gateway.dataDir, { recursive: true, force: true });
    }
  });
});
