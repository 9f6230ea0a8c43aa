/**
 * The `gateway` command line: the management API over HTTP. `runCli` takes its arguments and its I/O
 * from the caller and returns the exit status, so it runs the same in a terminal and inside a test.
 */
import { Command, CommanderError, Option } from 'commander';
import { CliError, DEFAULT_URL } from './api-client.js';
import { formatDependents } from './dependents.js';
import { configsCommand } from './commands/configs.js';
import { providersCommand, virtualKeysCommand } from './commands/credentials.js';
import { guardrailsCommand } from './commands/guardrails.js';
import { promptsCommand } from './commands/prompts.js';
import { keysCommand, whoamiCommand } from './commands/keys.js';
import { logsCommand } from './commands/logs.js';
import { rateLimitsCommand } from './commands/rate-limits.js';
import { semanticCacheCommand } from './commands/semantic-cache.js';
import { filesCommand } from './commands/files.js';
import { batchesCommand } from './commands/batches.js';
import { fineTuningCommand } from './commands/fine-tuning.js';
import { workspacesCommand } from './commands/workspaces.js';
import { processIo, type CliIo } from './io.js';

function buildProgram(io: CliIo): Command {
  const program = new Command('gateway')
    .description(
      'Manage an AI gateway: API keys, workspaces, virtual keys, providers, configs, guardrails, prompts, rate limits, logs, files, batches and fine-tuning jobs',
    )
    .addOption(new Option('--url <url>', `the gateway's address (env GATEWAY_URL, default ${DEFAULT_URL})`))
    .addOption(new Option('--key <key>', 'an admin API key (env GATEWAY_API_KEY)'))
    .option('--json', 'print the API response as JSON')
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout(text), writeErr: (text) => io.stderr(text) });
  for (const command of [
    whoamiCommand(io),
    keysCommand(io),
    workspacesCommand(io),
    virtualKeysCommand(io),
    providersCommand(io),
    configsCommand(io),
    guardrailsCommand(io),
    promptsCommand(io),
    rateLimitsCommand(io),
    semanticCacheCommand(io),
    logsCommand(io),
    filesCommand(io),
    batchesCommand(io),
    fineTuningCommand(io),
  ]) {
    // Subcommands inherit the overrides so their errors also come back here instead of exiting.
    command.exitOverride().configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
    });
    for (const sub of command.commands) {
      sub
        .exitOverride()
        .configureOutput({ writeOut: (text) => io.stdout(text), writeErr: (text) => io.stderr(text) });
    }
    program.addCommand(command);
  }
  return program;
}

/** Runs the CLI on `argv` (without the node and script names); resolves to the exit status. */
export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const program = buildProgram(io);
  let running: Command | undefined;
  program.hook('preAction', (_program, action) => {
    running = action;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version end here too, with exit code 0; commander has already printed its message.
      return error.exitCode;
    }
    if (error instanceof CliError) {
      io.stderr(`error: ${error.message}\n`);
      if (error.dependents) io.stderr(dependentsHelp(error.dependents, running));
      return 1;
    }
    io.stderr(`error: ${(error as Error).message ?? String(error)}\n`);
    return 1;
  }
}

/** The list of what refused the change, and (on a command that has it) how to make it anyway: the
 * gateway's message speaks of the API's `?force=true`, which the CLI sends for `--force`. */
function dependentsHelp(
  dependents: NonNullable<CliError['dependents']>,
  command: Command | undefined,
): string {
  const forceable = command?.options.some((option) => option.long === '--force') === true;
  const forced = command?.opts<{ force?: boolean }>().force === true;
  const hint =
    forceable && !forced
      ? 'Change them first, or run the command again with --force to make the change anyway.\n'
      : '';
  return `What depends on it:\n${formatDependents(dependents)}${hint}`;
}
