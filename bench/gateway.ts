// Starting the gateway under test as `npm start` starts it, and checking that a target answers a chat
// request with the fake upstream's reply. Shared by both modes.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCommand } from '../scripts/start-command.js';
import { freePort } from '../test/helpers/free-port.js';
import type { Args } from './args.js';
import { startNodeServer, type Child } from './processes.js';
import { chatBody, type Target } from './target.js';

export type StartedGateway = { child: Child; target: Target; dataDir: string } | { reason: string };

/**
 * `pin`: a CPU list for `taskset -c` (saturation mode), else the gateway runs unpinned. `extraNodeFlags`
 * go after `npm start`'s own (e.g. `--cpu-prof`, which NODE_OPTIONS does not take).
 */
export async function startGateway(
  args: Args,
  repoRoot: string,
  upstreamUrl: string,
  pin?: string,
  extraNodeFlags: string[] = [],
  /** Node flags in place of those `npm start` gives (bench/compare.ts's `--b-node-flags`). */
  startFlags?: string[],
): Promise<StartedGateway> {
  const entry = args.gatewayEntry;
  if (args.build) {
    console.log('building: npx tsc -p tsconfig.build.json');
    try {
      execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], {
        cwd: repoRoot,
        stdio: 'inherit',
        timeout: 120_000,
      });
    } catch (err) {
      return { reason: `production build failed: ${(err as Error).message}` };
    }
  }
  if (!existsSync(entry))
    return {
      reason: `${path.relative(repoRoot, entry)} is missing (run \`npm run build\`, or pass --build)`,
    };

  const start = startCommand(repoRoot);
  const profileFlags =
    args.cpuProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${args.cpuProfileDir}`];
  const baseFlags = startFlags ?? (start.command === 'node' ? start.flags : []);
  const nodeFlags = [...baseFlags, ...extraNodeFlags, ...profileFlags];
  const pinned = pin === undefined ? '' : `taskset -c ${pin} `;
  console.log(
    `gateway: ${pinned}node ${[...nodeFlags, path.relative(repoRoot, entry)].join(' ')}${startFlags === undefined ? ' (as npm start runs it)' : ''}`,
  );
  const port = await freePort();
  const adminKey = `gw-bench-${randomBytes(12).toString('hex')}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gateway-bench-'));
  let child: Child;
  try {
    child = await startNodeServer(
      entry,
      {
        PORT: String(port),
        HOST: '127.0.0.1',
        GATEWAY_DATA_DIR: dataDir,
        GATEWAY_ADMIN_KEY: adminKey,
        LOG_LEVEL: 'warn',
        ...(args.redis !== undefined && {
          REDIS_URL: args.redis,
          GATEWAY_REDIS_PREFIX: `bench:${randomBytes(4).toString('hex')}:`,
        }),
      },
      port,
      nodeFlags,
      pin,
    );
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    return { reason: `gateway did not start: ${(err as Error).message.slice(0, 2000)}` };
  }
  const routing: Record<string, string> =
    args.config !== undefined
      ? { 'x-gateway-config': args.config.replaceAll('{{UPSTREAM}}', upstreamUrl) }
      : { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': upstreamUrl };
  const target: Target = {
    name: 'gateway',
    origin: `http://127.0.0.1:${port}`,
    path: '/v1/chat/completions',
    headers: { 'x-gateway-api-key': adminKey, authorization: 'Bearer sk-bench', ...routing },
  };
  const policyProblem = await createPolicies(target, args.rateLimitPolicies ?? []);
  if (policyProblem) {
    await child.stop();
    rmSync(dataDir, { recursive: true, force: true });
    return { reason: `a rate-limit policy was refused: ${policyProblem}` };
  }
  // One real request first: a gateway that answers /health but not chat is reported, not benchmarked.
  const probe = await checkTarget(target);
  if (probe) {
    await child.stop();
    rmSync(dataDir, { recursive: true, force: true });
    return { reason: `gateway is up but the chat request failed: ${probe}${tail(child)}` };
  }
  return { child, target, dataDir };
}

const tail = (child: Child) => {
  const t = child.stderrTail().trim();
  return t ? `\n  gateway stderr: ${t.slice(-1500)}` : '';
};

/** Creates the bench's rate-limit policies (`--rate-limit-policy`) with the admin key; a problem, if any. */
async function createPolicies(
  target: Target,
  policies: Record<string, unknown>[],
): Promise<string | undefined> {
  for (const policy of policies) {
    const res = await fetch(`${target.origin}/v1/policies/rate-limits`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': target.headers['x-gateway-api-key'],
      },
      body: JSON.stringify(policy),
    });
    if (res.status !== 200) return `HTTP ${res.status}: ${(await res.text()).slice(0, 500)}`;
    console.log(`rate-limit policy ${((await res.json()) as { id: string }).id}: ${JSON.stringify(policy)}`);
  }
  return undefined;
}

/** Undefined when the target answers a chat request with the fake's reply, else what went wrong. */
export async function checkTarget(target: Target): Promise<string | undefined> {
  try {
    const res = await fetch(`${target.origin}${target.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...target.headers },
      body: chatBody(0),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (res.status !== 200) return `HTTP ${res.status}: ${text.slice(0, 500)}`;
    if (!text.includes('Hello from the bench upstream.')) return `unexpected body: ${text.slice(0, 500)}`;
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
