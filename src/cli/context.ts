/** What every command needs: the API client, the output, and whether to print JSON. */
import type { Command } from 'commander';
import { createApiClient, DEFAULT_URL, type ApiClient } from './api-client.js';
import type { CliIo } from './io.js';

export interface CommandContext {
  api: ApiClient;
  io: CliIo;
  json: boolean;
  /** Prints the API's JSON with --json, the human form otherwise. */
  print(value: unknown, human: () => string): void;
}

interface GlobalOptions {
  url?: string;
  key?: string;
  json?: boolean;
}

export function commandContext(command: Command, io: CliIo): CommandContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  const json = options.json === true;
  return {
    api: createApiClient({
      url: options.url ?? io.env.GATEWAY_URL ?? DEFAULT_URL,
      key: options.key ?? io.env.GATEWAY_API_KEY,
    }),
    io,
    json,
    print(value, human) {
      io.stdout(json ? `${JSON.stringify(value, null, 2)}\n` : human());
    },
  };
}
