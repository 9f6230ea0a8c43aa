/** Where the CLI reads its environment and writes its output: the process, or a test's buffers. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  /** Reads a file named on the command line (configs, guardrails). */
  readFile?(path: string): Promise<string>;
}

export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
  };
}
