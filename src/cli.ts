#!/usr/bin/env node
/** The `gateway` executable (package.json `bin`). The commands themselves are in ./cli/. */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runCli } from './cli/run-cli.js';

export { runCli } from './cli/run-cli.js';
export type { CliIo } from './cli/io.js';

function isMain(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    // npm installs `bin` entries as symlinks, so compare real paths.
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  // The reader of the output went away (`gateway logs list --json | head`): nothing more can be shown,
  // and that is no error of the command's. Stop quietly, as command-line tools do.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  process.exitCode = await runCli(process.argv.slice(2));
}
