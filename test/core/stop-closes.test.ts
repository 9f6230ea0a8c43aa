/**
 * The closes at a stop's end (src/stop-closes.ts): in turn, each with its share of the time left, one that
 * does not close in it named in the log and left. Here the event loop is held inside a close (a
 * synchronous close, a busy or starved process) rather than a peer slow to answer.
 */
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { closeInTurn } from '../../src/stop-closes.js';

const quiet = pino({ level: 'silent' });

/** Holds the event loop for `ms`. */
function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const closesAfter = (ms: number) => () => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('closeInTurn', () => {
  it('gives each close its least share from its own start, when one before held the loop past all of it', async () => {
    const closed: string[] = [];
    const late = await closeInTurn(
      [
        { name: 'held', close: () => busyWait(300) },
        { name: 'next', close: () => closesAfter(10)().then(() => void closed.push('next')) },
        { name: 'last', close: () => closesAfter(10)().then(() => void closed.push('last')) },
      ],
      200,
      quiet,
    );
    expect(late).toEqual([]);
    expect(closed).toEqual(['next', 'last']);
  });

  it('still leaves a close that does not end in its share, and goes on', async () => {
    const started = performance.now();
    const late = await closeInTurn(
      [
        { name: 'silent', close: () => new Promise<void>(() => undefined) },
        { name: 'quick', close: closesAfter(5) },
      ],
      200,
      quiet,
    );
    expect(late).toEqual(['silent']);
    expect(performance.now() - started).toBeLessThan(400);
  });

  it('tears down a close that did not end in its share, and only that one', async () => {
    const torn: string[] = [];
    const late = await closeInTurn(
      [
        {
          name: 'silent',
          close: () => new Promise<void>(() => undefined),
          destroy: () => void torn.push('silent'),
        },
        { name: 'quick', close: closesAfter(5), destroy: () => void torn.push('quick') },
      ],
      200,
      quiet,
    );
    expect(late).toEqual(['silent']);
    expect(torn).toEqual(['silent']);
  });
});
