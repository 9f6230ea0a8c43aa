/**
 * Starts a real gateway in-process on a free loopback port, on a fresh SQLite file (or, with
 * `store: 'postgres'`, in a fresh PostgreSQL schema), with a known admin key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { createGatewayServer, type GatewayServer } from '../../src/gateway-server.js';
import { loadSettings } from '../../src/settings.js';
import type { TargetStep } from '../../src/gateway/steps/index.js';

export interface TestGateway {
  /** Base URL ending with /v1, for the openai SDK. */
  url: string;
  /** Origin, e.g. http://127.0.0.1:PORT, for /health and raw fetches. */
  origin: string;
  /** The gateway's GATEWAY_ADMIN_KEY: one of its own, unless `env` gives it. */
  adminKey: string;
  server: GatewayServer;
  dataDir: string;
  close(): Promise<void>;
}

export interface StartGatewayOptions {
  env?: Record<string, string>;
  /** Run against PostgreSQL: the URL and a schema of the test's own. */
  postgres?: { url: string; schema: string };
  /** The steps every target runs, when not the default chain. */
  targetSteps?: readonly TargetStep[];
  /** The rate-limit counters' clock (ms), to move time without waiting. */
  rateLimitClock?: () => number;
  /** How long before a foreground response left `in_progress` is failed (six hours by default). */
  responsesInterruptedAfterMs?: number;
  /** How long the job workers try again work the store keeps failing for. */
  jobRetryForMs?: number;
}

/**
 * What every node of one deployment is started with, to run several gateways on one store: one master key
 * and one admin key (`gw-<label>-…`).
 */
export function deploymentKeys(label: string): { GATEWAY_MASTER_KEY: string; GATEWAY_ADMIN_KEY: string } {
  return {
    GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
    GATEWAY_ADMIN_KEY: `gw-${label}-${randomBytes(12).toString('hex')}`,
  };
}

export async function startGateway(options: StartGatewayOptions = {}): Promise<TestGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-test-'));
  const env: NodeJS.ProcessEnv = {
    PORT: '0',
    HOST: '127.0.0.1',
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_KEY: `gw-test-${randomBytes(16).toString('hex')}`,
    LOG_LEVEL: 'silent',
    GATEWAY_LOG_FLUSH_INTERVAL_MS: '50',
    GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
    ...(options.postgres ? { DATABASE_URL: options.postgres.url } : {}),
    ...options.env,
  };
  const settings = loadSettings(env);
  const server = await createGatewayServer(settings, {
    env,
    logger: pino({ level: env.LOG_LEVEL ?? 'silent' }),
    pgSchema: options.postgres?.schema,
    targetSteps: options.targetSteps,
    ...(options.rateLimitClock && { rateLimitClock: options.rateLimitClock }),
    ...(options.responsesInterruptedAfterMs !== undefined && {
      responsesInterruptedAfterMs: options.responsesInterruptedAfterMs,
    }),
    ...(options.jobRetryForMs !== undefined && { jobRetryForMs: options.jobRetryForMs }),
  });
  const origin = await server.listen();
  return {
    url: `${origin}/v1`,
    origin,
    adminKey: env.GATEWAY_ADMIN_KEY!,
    server,
    dataDir,
    async close() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** POSTs `body` to `path` under `/v1` with fetch under `config`, as the admin key; the response as it came. */
export function postWithConfig(
  gateway: TestGateway,
  path: string,
  config: unknown,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': gateway.adminKey,
      'x-gateway-config': JSON.stringify(config),
      ...headers,
    },
    body: JSON.stringify(body),
    signal,
  });
}

/** POSTs a chat completion body with fetch under `config`, as the admin key; the response as it came. */
export function postChat(
  gateway: TestGateway,
  config: Record<string, unknown>,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return postWithConfig(gateway, '/chat/completions', config, body, headers, signal);
}
