/**
 * The command line of `npm start`, read from package.json, so the bench and the production-start test run
 * the gateway exactly as users start it (Node.js flags included).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface StartCommand {
  /** The program, `node` for this project. */
  command: string;
  /** Its arguments: Node.js flags, then the script (relative to the repository root). */
  args: string[];
  /** The Node.js flags (`--…`) among them. */
  flags: string[];
}

export function startCommand(repoRoot: string): StartCommand {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
    scripts?: { start?: string };
  };
  const [command = '', ...args] = (pkg.scripts?.start ?? '').trim().split(/\s+/);
  return { command, args, flags: args.filter((word) => word.startsWith('--')) };
}
