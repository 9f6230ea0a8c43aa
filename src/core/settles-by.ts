/**
 * Waiting for something with a deadline, as a stop does for each part it ends (the final writes, the span
 * export, the work it gives back, the closes): past the deadline the wait ends, the thing is left as it is.
 */

/** Waits for `promise` until `deadline` (a `performance.now()` time): true when it settled by then. */
export function settlesBy(promise: Promise<unknown> | undefined, deadline: number): Promise<boolean> {
  const settled = Promise.resolve(promise).then(
    () => true,
    () => true,
  );
  if (deadline === Infinity) return settled;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, deadline - performance.now()), false);
  });
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}
