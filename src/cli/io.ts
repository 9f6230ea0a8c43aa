/** Where the CLI reads its environment and writes its output: the process, or a test's buffers. */
import { once } from 'node:events';

export interface CliIo {
  /** Text, or a file's bytes as they are (a download to stdout). A promise says to wait before writing
   * more: the output is not taking it as fast as it comes. */
  stdout(data: string | Uint8Array): void | Promise<unknown>;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  /** Reads a file named on the command line (configs, guardrails). */
  readFile?(path: string): Promise<string>;
}

export function processIo(): CliIo {
  return {
    stdout: (data) => (process.stdout.write(data) ? undefined : once(process.stdout, 'drain')),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
  };
}
