/**
 * settlesBy, the wait with a deadline every part of a stop uses (core/settles-by.ts). Its deadline is a
 * timer, and a timer whose time came while the event loop could not run (a busy process, a starved one)
 * fires before the loop takes in the I/O that came meanwhile: what settled by the deadline is judged on
 * that I/O, not on which callback the loop happens to run first.
 */
import { stat } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { settlesBy } from '../../src/core/settles-by.js';

/** Holds the event loop for `ms`: it runs nothing else meanwhile, as a starved process does not. */
function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('settlesBy', () => {
  it('is true for a promise that settles in time, false for one that does not', async () => {
    expect(await settlesBy(Promise.resolve(), performance.now() + 50)).toBe(true);
    expect(await settlesBy(new Promise(() => undefined), performance.now() + 20)).toBe(false);
    expect(await settlesBy(undefined, performance.now())).toBe(true);
  });

  it('counts I/O that came in while the loop was held past the deadline as in time', async () => {
    // A look-up the thread pool ends at once; its callback waits for the loop, as a store's answer does.
    const reading = stat(import.meta.filename);
    const settled = settlesBy(reading, performance.now() + 10);
    busyWait(200);
    expect(await settled).toBe(true);
  });

  it('is still false past the deadline for what has not come by then', async () => {
    const settled = settlesBy(new Promise(() => undefined), performance.now() + 10);
    busyWait(50);
    expect(await settled).toBe(false);
  });
});
