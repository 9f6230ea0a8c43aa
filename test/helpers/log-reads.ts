/** Set-up shared by the tests of the log's readers (log searches and analytics queries). */

/** The code a read was refused with, or 'answered'. */
export function outcome(read: Promise<unknown>): Promise<string> {
  return read.then(
    () => 'answered',
    (error: { code?: string }) => error.code ?? String(error),
  );
}
