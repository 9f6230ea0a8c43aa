/**
 * SharedReads: the batch worker's reads of a batch's call and of its API key, shared by the lines that need
 * them at once, kept (for a while), and not kept once failed.
 */
import { describe, expect, it, vi } from 'vitest';
import { SharedReads } from '../../src/gateway/batches/shared-reads.js';
import { sleep } from './support.js';

function counted<V>(answer: () => Promise<V>) {
  const read = () => {
    read.count++;
    return answer();
  };
  read.count = 0;
  return read;
}

describe('SharedReads', () => {
  it('shares one read among the callers of a key, under way and once done', async () => {
    const reads = new SharedReads<string, number>();
    const read = counted(() => sleep(5).then(() => 7));
    const together = await Promise.all([reads.get('a', read), reads.get('a', read)]);
    expect(together).toEqual([7, 7]);
    expect(await reads.get('a', read)).toBe(7);
    expect(read.count).toBe(1);
    // Another key is its own read.
    expect(await reads.get('b', read)).toBe(7);
    expect(read.count).toBe(2);
  });

  it('fails every caller that shared a failed read, and keeps it not: the next caller reads again', async () => {
    const reads = new SharedReads<string, number>();
    const failing = counted(() => sleep(5).then(() => Promise.reject(new Error('store unavailable'))));
    const shared = [reads.get('a', failing), reads.get('a', failing)];
    await expect(Promise.all(shared)).rejects.toThrow('store unavailable');
    expect(failing.count).toBe(1);
    const good = counted(() => Promise.resolve(3));
    expect(await reads.get('a', good)).toBe(3);
    expect(good.count).toBe(1);
  });

  it('reads again once the kept read is maxAgeMs old', async () => {
    // The monotonic clock SharedReads reads is faked: the second read is within maxAgeMs however slowly
    // the machine runs the test.
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      const reads = new SharedReads<string, number>(40);
      let value = 1;
      const read = counted(() => Promise.resolve(value));
      expect(await reads.get('a', read)).toBe(1);
      value = 2;
      vi.advanceTimersByTime(39);
      expect(await reads.get('a', read)).toBe(1);
      vi.advanceTimersByTime(1);
      expect(await reads.get('a', read)).toBe(2);
      expect(read.count).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reads again once maxAgeMs have passed though the wall clock stepped back', async () => {
    const reads = new SharedReads<string, number>(40);
    const read = counted(() => Promise.resolve(1));
    await reads.get('a', read);
    // The system clock set back an hour (NTP, a VM resumed): the read is as old as the time that passed.
    const stepped = Date.now() - 3_600_000;
    const wallClock = vi.spyOn(Date, 'now').mockReturnValue(stepped);
    try {
      await sleep(60);
      await reads.get('a', read);
      expect(read.count).toBe(2);
    } finally {
      wallClock.mockRestore();
    }
  });

  it('forgets a key deleted', async () => {
    const reads = new SharedReads<string, number>();
    const read = counted(() => Promise.resolve(1));
    await reads.get('a', read);
    reads.delete('a');
    await reads.get('a', read);
    expect(read.count).toBe(2);
  });

  it('forgets the keys picked', async () => {
    const reads = new SharedReads<string, number>();
    const read = counted(() => Promise.resolve(1));
    await Promise.all(['a', 'b', 'c'].map((key) => reads.get(key, read)));
    reads.forget((key) => key !== 'b');
    expect([...reads.keys()]).toEqual(['b']);
  });
});
