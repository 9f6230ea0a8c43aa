/**
 * Waiting for something with a deadline, as a stop does for each part it ends (the final writes, the span
 * export, the work it gives back, the closes): past the deadline the wait ends, the thing is left as it is.
 *
 * The deadline is a timer, and a timer whose time came while the event loop could not run (a process held
 * by a long task, or starved of CPU) fires first when the loop runs again, before the I/O that came in
 * meanwhile (a store's answer, a worker's message) is taken in. So the wait ends one turn of the loop
 * later, after that I/O: what had settled by the deadline counts as in time, whichever the loop ran first.
 * That turn is the real loop's (node:timers' own setImmediate, which a test's fake clock leaves alone): it
 * waits for I/O, not for time.
 */
import { clearImmediate, setImmediate } from 'node:timers';

/** Waits for `promise` until `deadline` (a `performance.now()` time): true when it settled by then. */
export function settlesBy(promise: Promise<unknown> | undefined, deadline: number): Promise<boolean> {
  const settled = Promise.resolve(promise).then(
    () => true,
    () => true,
  );
  if (deadline === Infinity) return settled;
  let timer: NodeJS.Timeout | undefined;
  let turn: NodeJS.Immediate | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(
      () => {
        // The loop's I/O phase comes between the timers and the immediates.
        turn = setImmediate(resolve, false);
      },
      Math.max(0, deadline - performance.now()),
    );
  });
  return Promise.race([settled, late]).finally(() => {
    clearTimeout(timer);
    clearImmediate(turn);
  });
}
