/** Runs the CLI in-process against a test gateway, capturing what it prints. */
import { runCli, type CliIo } from '../../src/cli.js';
import type { TestGateway } from '../helpers/gateway.js';

export interface CliRun {
  code: number;
  stdout: string;
  /** The bytes written to stdout, as a pipe would get them. */
  stdoutBytes: Buffer;
  stderr: string;
  json(): any; // eslint-disable-line @typescript-eslint/no-explicit-any -- the API's JSON
}

/** `args` with GATEWAY_URL and GATEWAY_API_KEY pointing at `gateway` (an admin key), `env` on top. */
export async function runCliAgainst(
  gateway: TestGateway,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<CliRun> {
  const stdout: Buffer[] = [];
  let stderr = '';
  const io: CliIo = {
    stdout: (data) => void stdout.push(Buffer.from(data)),
    stderr: (text) => void (stderr += text),
    env: { GATEWAY_URL: gateway.origin, GATEWAY_API_KEY: gateway.adminKey, ...env },
  };
  const code = await runCli(args, io);
  const stdoutBytes = Buffer.concat(stdout);
  const text = stdoutBytes.toString('utf8');
  return { code, stdout: text, stdoutBytes, stderr, json: () => JSON.parse(text) };
}
